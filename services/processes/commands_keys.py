"""``feedbackloop keys``: bearer API keys made offline, for the operator to add to the settings."""

import json
from typing import Annotated

import typer

from services.edge.auth import SCOPES, new_key

HELP = "API keys: bearer keys bound to a tenant, a subject and scopes."


def keys_new(
    tenant: Annotated[str, typer.Option(help="The tenant every request of this key acts in")],
    subject: Annotated[str, typer.Option(help="Who: a person or a service")],
    scope: Annotated[list[str], typer.Option(help=f"Repeatable; one of: {', '.join(SCOPES)}")],
    service: Annotated[
        bool, typer.Option(help="A service's key, not a person's (it cannot run evals)")
    ] = False,
) -> None:
    """Make a key: prints the key once, and the entry to add to FEEDBACKLOOP_API_KEYS(_FILE)."""
    unknown = set(scope) - set(SCOPES)
    if unknown:
        raise typer.BadParameter(f"unknown scopes {sorted(unknown)}; known: {', '.join(SCOPES)}")
    key, entry = new_key(tenant, subject, scope, service=service)
    typer.echo(f"key:   {key}")
    typer.echo(f"entry: {json.dumps(entry)}")
