"""``feedbackloop erase`` / ``export`` / ``rewrap``: a person's erasure and access request, and
the master key's rotation, from the operator's command line (docs/privacy.md).

The operator who runs these holds the database and the master key already: they act as the
tenant's PlatformAdmin (decisions D43), on the one tenant they name.
"""

import json
import uuid
from dataclasses import replace
from datetime import UTC, datetime
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from services.processes import roles
from services.processes.bootstrap import Runtime
from services.processes.lifetime import console, process_settings, run_command, run_operator

OPERATOR = "operator"
# An erasure sends one command and rebuilds every read model: a rebuild's connections and a bus.
ERASING = replace(roles.REBUILD, name="erase", bus=2)
ADMIN = frozenset({"PlatformAdmin"})
Person = Annotated[str, typer.Option("--person", help="The person, as their API key names them")]
Tenant = Annotated[str, typer.Option("--tenant", help="The tenant the person belongs to")]


def erase(person: Person, tenant: Tenant) -> None:
    """Erase a person of one tenant: their data keys destroyed (their words and name in every
    event then read as erased, in the log and in every backup of it), `person-erased` recorded
    and published, the comment artifacts their feedback references deleted, and every read
    model rebuilt and swapped in. Their API keys kept in the store are revoked and their
    roles taken back; a key of theirs in FEEDBACKLOOP_API_KEYS is named in the log, to be
    removed there (decisions D146). Counts and decisions stay. Cannot be undone."""
    from contracts.privacy import ErasePerson
    from services.bus.issued import Issued
    from services.privacy.erasing import erase as erased

    async def work(rt: Runtime) -> dict[str, Any]:
        issued = Issued(
            ErasePerson(person=person), tenant, OPERATOR, f"cli/{uuid.uuid4()}",
            datetime.now(UTC), roles=ADMIN,
        )  # fmt: skip
        given = rt.given()
        with console.status(f"erasing {person} and rebuilding the read models"):
            return await erased(rt.store, rt.bus, rt.pool, issued, given.rebuild, rt.keys.entries)

    done = run_command(process_settings(), ERASING, work)
    console.print(
        f"erased {person} of {tenant}: {done['keysDestroyed']} keys destroyed, "
        f"{done['events']} events now read as erased, {done['artifactsDeleted']} artifacts deleted"
    )


def export(
    person: Person,
    tenant: Tenant,
    output: Annotated[
        typer.FileTextWrite, typer.Option("--output", "-o", help="Write the JSON here [stdout]")
    ] = "-",  # type: ignore[assignment]  # typer opens "-" as stdout
) -> None:
    """Everything the service holds about a person of one tenant, as JSON: their events,
    decoded (their words as they wrote them), and the artifacts those reference. Reads the
    whole log once, with a progress bar. An event of theirs whose sealed box fails
    authentication refuses the export, naming it (exit 1, decisions D145)."""
    from contracts.errors import Unreadable
    from services.privacy.erasing import export as exported

    async def work(rt: Runtime) -> dict[str, Any]:
        columns = (TextColumn("reading the log"), BarColumn(), MofNCompleteColumn(),
                   TimeRemainingColumn())  # fmt: skip
        with Progress(*columns, console=console) as progress:
            bar = progress.add_task("log", total=None)

            def moved(position: int, head: int) -> None:
                progress.update(bar, completed=position, total=head)

            return await exported(rt.store, rt.pool, tenant, person, ADMIN, moved)

    try:
        held = run_operator(process_settings(), work)
    except Unreadable as unreadable:
        console.print(unreadable.message, soft_wrap=True)
        raise typer.Exit(1) from None
    output.write(json.dumps(held, indent=2, ensure_ascii=False) + "\n")
    console.print(f"{len(held['events'])} events, {len(held['artifacts'])} artifacts")


def rewrap() -> None:
    """Key rotation: every data key wrapped again by the first of FEEDBACKLOOP_MASTER_KEYS.
    Run it after putting a new master key first; remove the old one from the settings only
    once this has run against every database (backups keep keys wrapped by the old one)."""

    async def work(rt: Runtime) -> int:
        import asyncio

        return await asyncio.to_thread(rt.store.data_keys.rewrap)

    console.print(f"{run_operator(process_settings(), work)} data keys wrapped again")
