"""``feedbackloop keys revoke|list``, ``feedbackloop roles grant|revoke|list``,
``feedbackloop sessions end`` and ``feedbackloop audit export``: keys, role grants and the
console's ended sessions kept as events of a tenant, and the tenant's audit as CSV (decisions
D28, D30, D122).

An operator at this machine holds the database's credentials: the commands decide as a
PlatformAdmin of the tenant named, under the actor ``operator:<login>`` (decisions D28), and
each change is an event like one made over HTTP.
"""

import getpass
import uuid
from collections.abc import Awaitable
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import BaseModel

from contracts.roles import ROLES
from services.bus.decisions import Outcome
from services.bus.issued import Issued
from services.processes.bootstrap import Runtime
from services.processes.lifetime import console, process_settings, run_operator

ROLES_HELP = (
    "Roles of a tenant (SPEC C52): granted to and revoked from a subject (a person or a "
    "service), each change an event naming who made it. A key's holder has the roles granted "
    "to its subject from its next request on."
)
SESSIONS_HELP = (
    "The console's sessions of a tenant's people (decisions D122): ended by the server, so a "
    "copied cookie opens nothing after its session ends."
)
AUDIT_HELP = "The audit of a tenant: every command decided, applied or refused, with who and when."
Tenant = Annotated[str, typer.Option(help="The tenant it acts in")]


def operator() -> str:
    return f"operator:{getpass.getuser()}"


def decided(runtime: Runtime, tenant: str, command: BaseModel) -> Awaitable[Outcome]:
    """Decide ``command`` in ``tenant`` as this machine's operator, a PlatformAdmin."""
    issued = Issued(
        command,
        tenant,
        operator(),
        str(uuid.uuid4()),
        datetime.now(UTC),
        roles=frozenset({"PlatformAdmin"}),
    )
    return runtime.bus.execute(issued)


def known_role(role: str) -> str:
    if role not in ROLES:
        raise typer.BadParameter(f"unknown role {role!r}; known: {', '.join(ROLES)}")
    return role


def keys_revoke(
    tenant: Tenant,
    key_id: Annotated[str, typer.Argument(help="The key's id, as `keys list` shows it")],
) -> None:
    """Revoke a key kept in the store: every API process refuses it from its next request."""
    from contracts.access import RevokeApiKey

    try:
        command = RevokeApiKey(key_id=uuid.UUID(key_id))
    except ValueError:
        raise typer.BadParameter(f"not a key id: {key_id!r}") from None
    outcome: Outcome = run_operator(process_settings(), lambda rt: decided(rt, tenant, command))
    console.print(f"revoked {key_id} of {tenant} (log position {outcome.position})")


def keys_list(tenant: Tenant) -> None:
    """The keys issued in the tenant through the store, newest first (configured ones live
    in the settings): id, subject, scopes, who issued it and whether it is revoked."""
    from rich.table import Table

    from projections.access import list_keys

    async def every(rt: Runtime) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        before = None
        while True:
            page, before = await list_keys(rt.pool, tenant, before=before, limit=200)
            found += page
            if before is None:
                return found

    rows = run_operator(process_settings(), every)
    table = Table("key id", "subject", "scopes", "issued by", "issued at", "revoked")
    for k in rows:
        revoked = f"by {k['revokedBy']} at {k['revokedAt']}" if k["revoked"] else ""
        table.add_row(
            k["keyId"], k["subject"], " ".join(k["scopes"]), k["issuedBy"], k["issuedAt"], revoked
        )
    console.print(table)
    console.print(f"{len(rows)} keys")


def roles_grant(
    tenant: Tenant,
    subject: Annotated[str, typer.Argument(help="Who: a person or a service")],
    role: Annotated[str, typer.Argument(help=f"One of: {', '.join(ROLES)}")],
) -> None:
    """Grant a role: the subject's keys hold it from their next request on."""
    from contracts.access import GrantRole

    command = GrantRole.model_validate({"subject": subject, "role": known_role(role)})
    outcome: Outcome = run_operator(process_settings(), lambda rt: decided(rt, tenant, command))
    console.print(f"granted {role} to {subject} in {tenant} (log position {outcome.position})")


def roles_revoke(
    tenant: Tenant,
    subject: Annotated[str, typer.Argument(help="Who: a person or a service")],
    role: Annotated[str, typer.Argument(help=f"One of: {', '.join(ROLES)}")],
) -> None:
    """Revoke a role granted in the store: the subject's next request lacks it."""
    from contracts.access import RevokeRole

    command = RevokeRole.model_validate({"subject": subject, "role": known_role(role)})
    outcome: Outcome = run_operator(process_settings(), lambda rt: decided(rt, tenant, command))
    console.print(f"revoked {role} of {subject} in {tenant} (log position {outcome.position})")


def sessions_end(
    tenant: Tenant,
    subject: Annotated[str, typer.Argument(help="Whose console sessions end")],
) -> None:
    """End every console session of the subject begun until now (decisions D122): each
    one's next request is sent to sign in. Their keys and roles are left as they are."""
    from contracts.sessions import EndConsoleSessions

    command = EndConsoleSessions(subject=subject)
    outcome: Outcome = run_operator(process_settings(), lambda rt: decided(rt, tenant, command))
    console.print(
        f"ended the console sessions of {subject} in {tenant} (log position {outcome.position})"
    )


def roles_list(tenant: Tenant) -> None:
    """The roles granted in the tenant through the store, by subject, with who granted them."""
    from rich.table import Table

    from projections.access import list_grants

    async def every(rt: Runtime) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        after = None
        while True:
            page, after = await list_grants(rt.pool, tenant, after=after, limit=200)
            found += page
            if after is None:
                return found

    rows = run_operator(process_settings(), every)
    table = Table("subject", "role", "granted by", "granted at")
    for g in rows:
        table.add_row(g["subject"], g["role"], g["grantedBy"], g["grantedAt"])
    console.print(table)
    console.print(f"{len(rows)} grants")


def audit_export(
    tenant: Tenant,
    out: Annotated[Path, typer.Option(help="The CSV file to write (replaced if it exists)")],
    actor: Annotated[str | None, typer.Option(help="Only this actor's decisions")] = None,
    aggregate: Annotated[
        str | None, typer.Option(help="Only decisions on this aggregate (its id)")
    ] = None,
    since: Annotated[
        datetime | None, typer.Option(help="From this instant (inclusive), UTC if no offset")
    ] = None,
    until: Annotated[
        datetime | None, typer.Option(help="Before this instant, UTC if no offset")
    ] = None,
) -> None:
    """Write the tenant's audit, newest first, as CSV: at, actor, roles, service, command,
    command id, aggregates, result, reason. The same rows and filters as GET /factory/audit."""
    from rich.progress import MofNCompleteColumn, Progress, TimeRemainingColumn

    from services.bus.audit import AuditFilter, audit_count
    from services.bus.audit_csv import audit_csv

    try:
        named = None if aggregate is None else uuid.UUID(aggregate)
    except ValueError:
        raise typer.BadParameter(f"not an aggregate id: {aggregate!r}") from None
    where = AuditFilter(actor, named, utc(since), utc(until))

    async def export(rt: Runtime) -> int:
        total = await audit_count(rt.pool, tenant, where)
        written = 0
        columns = (
            *Progress.get_default_columns()[:-1],
            MofNCompleteColumn(),
            TimeRemainingColumn(),
        )
        with out.open("w", newline="") as file, Progress(*columns, console=console) as progress:
            bar = progress.add_task("audit", total=total)
            async for text, rows in audit_csv(rt.pool, tenant, where):
                file.write(text)
                written += rows
                progress.update(bar, completed=written)
        return written

    written = run_operator(process_settings(), export)
    console.print(f"wrote {written} decisions of {tenant} to {out}")


def utc(instant: datetime | None) -> datetime | None:
    if instant is None or instant.tzinfo is not None:
        return instant
    return instant.replace(tzinfo=UTC)
