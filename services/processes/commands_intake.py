"""``feedbackloop intake``: the triage intake of the weekly digest (docs/digests.md) — run it
as a process of its own, and show its standing-issue ledger."""

from typing import Annotated

import typer

from services.processes.bootstrap import Runtime
from services.processes.lifetime import console, process_settings, run_operator

HELP = (
    "The triage intake of the weekly digest: each agent's weekly post goes to the agent's "
    "standing issue in the repository the agent register names (`feedbackloop agents "
    "register --repository owner/name`): filed once as 'Wrong answers — AGENT', commented "
    "on every following week. Trackers are configured per tenant in FEEDBACKLOOP_TRACKERS "
    '(`{"tenant": {"url": "https://api.github.com", "token": "…"}}`); '
    "the intake runs in `serve` and in `handover` (its reader `triage-intake` in "
    "`feedbackloop status` says when a tracker is down and it waits)."
)


def intake_show(
    tenant: Annotated[str, typer.Option(help="The tenant whose ledger it is")],
    agent: Annotated[
        str | None, typer.Argument(help="One agent's path: its issue and every weekly item")
    ] = None,
) -> None:
    """The standing-issue ledger: per agent its repository, issue, digests taken in (W136),
    comments made and a finding where nothing could be filed; with AGENT, its weekly items
    (exit 1 when the ledger has no such agent)."""
    from rich.console import Console
    from rich.table import Table

    from projections.standing_issues import get_standing_issue, list_standing_issues

    async def ledger(rt: Runtime) -> Table | None:
        table = Table("agent", "repository", "issue", "digests", "comments", "last week",
                      "finding")  # fmt: skip
        for s in await list_standing_issues(rt.pool, tenant):
            table.add_row(s["agent"], s["repository"] or "-", s["issueUrl"] or "-",
                          str(s["digests"]), str(s["comments"]), s["lastWeek"],
                          s["finding"] or "")  # fmt: skip
        return table

    async def one(rt: Runtime) -> Table | None:
        assert agent is not None
        found = await get_standing_issue(rt.pool, tenant, agent)
        if found is None:
            return None
        table = Table("week", "outcome", "issue", "comment", "finding",
                      title=f"{agent}: {found['standing']['issueUrl'] or 'no issue'}")  # fmt: skip
        for i in found["items"]:
            table.add_row(i["week"], i["outcome"], i["issueUrl"] or "-", i["commentUrl"] or "-",
                          i["finding"] or "")  # fmt: skip
        return table

    shown = run_operator(process_settings(), ledger if agent is None else one)
    if shown is None:
        console.print(f"no standing issue of agent {agent!r} in tenant {tenant!r}")
        raise typer.Exit(1)
    Console().print(shown)  # the answer, on stdout
