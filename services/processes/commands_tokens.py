"""``feedbackloop tokens``: the configured OAuth2 issuers as the API sees them, and why a
bearer token is accepted or refused (docs/security.md)."""

import json
import sys

import typer

from services.edge.token_claims import Refusal
from services.processes.lifetime import process_settings

HELP = (
    "Bearer tokens of the OAuth2 issuers in FEEDBACKLOOP_OAUTH_ISSUERS: check that each issuer "
    "publishes its keys (`tokens issuers`), or check one token (`tokens check < token.txt`)."
)


def tokens_issuers() -> None:
    """Fetch each configured issuer's discovery document and JWKS, and list the key ids it
    publishes: what the API will verify tokens with. Exits 1 if an issuer cannot be read."""
    settings = process_settings()
    verifier = settings.token_verifier()
    if not verifier:
        typer.echo("no issuer configured (FEEDBACKLOOP_OAUTH_ISSUERS): API keys only")
        return
    failed = False
    for trusted in settings.oauth_issuers:
        try:
            kids = verifier.published_kids(trusted.issuer)
        except Refusal as refusal:
            typer.echo(f"{trusted.issuer}: {refusal.reason} (see the log above)")
            failed = True
            continue
        typer.echo(
            f"{trusted.issuer}: audience {trusted.audience}, keys {', '.join(kids)}; "
            f"tenants {', '.join(trusted.tenants)}; roles {', '.join(trusted.roles) or 'none'}"
        )
    if failed:
        raise typer.Exit(1)


def tokens_check() -> None:
    """Read one bearer token from standard input (never from the command line, where `ps` and
    the shell's history would keep it) and verify it as the API does: prints the principal it
    grants (tenant, subject, scopes, roles, service), or the reason it is refused, exit 1.

    Example: `feedbackloop tokens check < token.txt`"""
    settings = process_settings()
    verifier = settings.token_verifier()
    if not verifier:
        typer.echo("no issuer configured (FEEDBACKLOOP_OAUTH_ISSUERS)", err=True)
        raise typer.Exit(2)
    token = sys.stdin.read().strip().removeprefix("Bearer ").strip()
    try:
        principal = verifier.principal(token)
    except Refusal as refusal:
        typer.echo(f"refused: {refusal.reason}", err=True)
        raise typer.Exit(1) from None
    answer = {
        "tenant": principal.tenant_id,
        "subject": principal.subject,
        "scopes": sorted(principal.scopes),
        "roles": sorted(principal.roles),
        "service": principal.service,
    }
    typer.echo(json.dumps(answer, indent=2))
