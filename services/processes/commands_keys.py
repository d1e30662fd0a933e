"""``feedbackloop keys new``: a bearer API key, made offline for the operator to add to the
settings, or (``--store``) issued as an event of the tenant, which every API process takes
from its next request on (decisions D28, D29)."""

import json
from typing import Annotated

import typer

from contracts.roles import ROLES
from services.edge.auth import SCOPES, hash_key, new_key

HELP = (
    "API keys: bearer keys bound to a tenant, a subject and scopes. Configured in the settings "
    "(FEEDBACKLOOP_API_KEYS, FEEDBACKLOOP_API_KEYS_FILE) on machines without the store's keys, "
    "or issued and revoked in the store (`keys new --store`, `keys revoke`, `keys list`); "
    "the roles a key's holder has are granted to its subject (`feedbackloop roles`)."
)


def keys_new(
    tenant: Annotated[str, typer.Option(help="The tenant every request of this key acts in")],
    subject: Annotated[str, typer.Option(help="Who: a person or a service")],
    scope: Annotated[list[str], typer.Option(help=f"Repeatable; one of: {', '.join(SCOPES)}")],
    service: Annotated[
        bool, typer.Option(help="A service's key, not a person's (it cannot run evals)")
    ] = False,
    role: Annotated[
        list[str] | None,
        typer.Option(
            help=f"Repeatable; one of: {', '.join(ROLES)}. The roles a configured key holds "
            "(it then holds those only); none given: the roles its scopes imply (decisions "
            "D26). A stored key's roles are granted to its subject (`feedbackloop roles "
            "grant`), not here"
        ),
    ] = None,
    store: Annotated[
        bool,
        typer.Option(
            help="Issue it in the store as an event of the tenant (needs the database), "
            "instead of printing an entry for the settings"
        ),
    ] = False,
) -> None:
    """Make a key: prints the key once, and either the entry to add to
    FEEDBACKLOOP_API_KEYS(_FILE) or (--store) the id it was issued under."""
    unknown = set(scope) - set(SCOPES)
    if unknown:
        raise typer.BadParameter(f"unknown scopes {sorted(unknown)}; known: {', '.join(SCOPES)}")
    unknown_roles = set(role or ()) - set(ROLES)
    if unknown_roles:
        raise typer.BadParameter(
            f"unknown roles {sorted(unknown_roles)}; known: {', '.join(ROLES)}",
            param_hint="--role",
        )
    if role and store:
        raise typer.BadParameter(
            "a stored key's holder gets roles by grant: `feedbackloop roles grant`",
            param_hint="--role",
        )
    roles = list(dict.fromkeys(role)) if role else None
    key, entry = new_key(tenant, subject, scope, service=service, roles=roles)
    if not store:
        typer.echo(f"key:   {key}")
        typer.echo(f"entry: {json.dumps(entry)}")
        return
    from contracts.access import IssueApiKey
    from services.bus.decisions import Outcome
    from services.processes.commands_access import decided
    from services.processes.lifetime import process_settings, run_operator

    command = IssueApiKey.model_validate(
        {"sha256": hash_key(key), "subject": subject, "scopes": scope, "service": service}
    )
    outcome: Outcome = run_operator(process_settings(), lambda rt: decided(rt, tenant, command))
    typer.echo(f"key:    {key}")
    typer.echo(f"key id: {outcome.result['keyId']}")
