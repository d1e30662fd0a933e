"""``feedbackloop agents``: the agent→maintainers register of a tenant, from the command line.

Who runs this holds the database's credentials, which is more than any key: its writes are
issued as a PlatformAdmin (the one role that writes the register, decisions D25) under the
name given by ``--by``, and every change is an event of the log, as one made over HTTP."""

import asyncio
import uuid
from datetime import UTC, datetime
from typing import Annotated, Any

import typer

from services.processes.bootstrap import Runtime
from services.processes.lifetime import console, process_settings, run_operator

HELP = (
    "The agent register of a tenant: who maintains each agent (its AssetMaintainers, who "
    "confirm and run its eval cases and decide its proposals) and the tracker repository "
    "its issues are filed in. The same register as PUT/GET /factory/agents/{agent}."
)
TENANT = typer.Option(help="The tenant whose register it is")


def agents_register(
    agent: Annotated[str, typer.Argument(help="The agent's path, e.g. AgenticOffice/Agent/Coach")],
    tenant: Annotated[str, TENANT],
    maintainer: Annotated[
        list[str], typer.Option(help="Repeatable: a subject who maintains the agent")
    ],
    repository: Annotated[
        str | None, typer.Option(help="owner/name of the tracker repository of its issues")
    ] = None,
    by: Annotated[str, typer.Option(help="Who makes the change, as the log records it")] = "cli",
) -> None:
    """Register an agent, or replace its maintainers and repository: afterwards the register
    holds exactly what is given here."""
    from pydantic import ValidationError

    from contracts.agent_register import RegisterAgent, RegisterAgentCommand
    from services.bus.issued import Issued

    try:
        said = RegisterAgent(maintainers=maintainer, repository=repository)
        command = RegisterAgentCommand(agent=agent, registration=said)
    except ValidationError as error:
        first = error.errors()[0]
        raise typer.BadParameter(f"{'.'.join(map(str, first['loc']))}: {first['msg']}") from None

    async def work(rt: Runtime) -> str:
        issued = Issued(
            command, tenant, by, f"cli/{uuid.uuid4()}", datetime.now(UTC),
            roles=frozenset({"PlatformAdmin"}),
        )  # fmt: skip
        outcome = await rt.bus.execute(issued)
        shown = outcome.result
        return f"{shown.agent}: {', '.join(shown.maintainers)} (repository: {shown.repository})"

    console.print(run_operator(process_settings(), work))


def agents_show(
    agent: Annotated[str, typer.Argument(help="The agent's path")],
    tenant: Annotated[str, TENANT],
) -> None:
    """What the register holds of one agent: its maintainers and repository (exit 1 if none)."""
    from services.permissions.agent_register import registration

    async def work(rt: Runtime) -> str | None:
        found = await asyncio.to_thread(registration, rt.store, tenant, agent)
        if found is None:
            return None
        return f"{found.agent}: {', '.join(found.maintainers)} (repository: {found.repository})"

    shown = run_operator(process_settings(), work)
    if shown is None:
        console.print(f"no agent {agent!r} in the register of tenant {tenant!r}")
        raise typer.Exit(1)
    console.print(shown)


def agents_list(tenant: Annotated[str, TENANT]) -> None:
    """Every agent of the tenant's register, by name, with its maintainers and repository: what
    the register's read model holds (a running service keeps it; `feedbackloop rebuild access`
    remakes it from the log)."""
    from rich.table import Table

    from projections.agent_register import list_agents

    async def every(rt: Runtime) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        after = None
        while True:
            page, after = await list_agents(rt.pool, tenant, after=after, limit=200)
            found += page
            if after is None:
                return found

    rows = run_operator(process_settings(), every)
    table = Table("agent", "maintainers", "repository")
    for row in rows:
        table.add_row(row["agent"], ", ".join(row["maintainers"]), row["repository"] or "")
    console.print(table)
    console.print(f"{len(rows)} agents")


def agents_mine(
    tenant: Annotated[str, TENANT],
    maintainer: Annotated[
        str | None,
        typer.Option(help="The subject whose agents to show; without it, every agent"),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the API's JSON, one line")] = False,
) -> None:
    """What waits for an agent's maintainers, agent by agent: the open reports addressed to
    its owner, its cases failing in the last night, the proposals waiting for a maintainer
    and its webhook's health. The same answer as GET /factory/owners/agents (decisions
    D250-D256), read from the read models a running service keeps."""
    import json

    from rich.table import Table

    from services.owners.overview import owned_agents

    async def every(rt: Runtime) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        after = None
        while True:
            page, after = await owned_agents(rt.pool, tenant, maintainer, after=after, limit=200)
            found += page
            if after is None:
                return found

    rows = run_operator(process_settings(), every)
    if as_json:
        typer.echo(json.dumps({"items": rows}))  # one line, as the API answers it
        return
    table = Table("agent", "open reports", "failing last night", "proposals waiting", "webhook")
    for row in rows:
        night, hook = row["night"], row["webhook"]
        table.add_row(
            row["agent"],
            str(row["reports"]["open"]),
            f"{night['failing']} ({night['date']})" if night else "no night yet",
            str(row["proposals"]["waiting"]),
            "none" if hook is None else f"failing: {hook['lastError']}" if hook["failing"]
            else "delivering",
        )  # fmt: skip
    console.print(table)
    console.print(f"{len(rows)} agents")
