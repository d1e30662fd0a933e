"""``feedbackloop gate``: the CI gate (decisions D180–D184). Runs the agent's confirmed eval
cases on the current runner and on a candidate (a model name, or an agent's endpoint URL),
prints the side-by-side table, and exits 1 when a case that passed on the current runner does
not pass on the candidate, 0 otherwise, 2 on bad input (nothing run, nothing recorded).

With ``--pr`` and the tenant's tracker configured (FEEDBACKLOOP_TRACKERS, as the triage intake
reads it), the table is commented on the pull request once: the comment carries the intake's
marker keyed by agent, candidate, pull request and commit, so a re-run of the same commit
finds its comment and makes no second one (D184).
"""

import asyncio
import uuid
from typing import Annotated, Any
from uuid import UUID

import httpx
import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from contracts.agent import Effort
from contracts.comparisons import Runner
from contracts.errors import DomainError, NotConfigured
from projections.eval_cases import case_refs
from services.digests.tracker import GitHubTracker, TrackerRefused, split_repository, transient
from services.evals.agents import agent_client_from_settings
from services.evals.comparing import Asker, Comparer, Sides, confirmed_case_ids
from services.evals.comparison_api import comparison_view
from services.evals.domain import EvalCase
from services.evals.gate_table import HEADERS, headline, markdown, rows
from services.nightly.confirmer import why_confirmer_cannot
from services.nightly.planning import NO_CONFIRMER
from services.permissions.agent_register import registration
from services.processes.bootstrap import Runtime
from services.processes.lifetime import console, process_settings, run_operator
from services.processes.settings import Settings

GATE = "system:gate"  # the service identity the gate's own writes are issued as (D181)
BAD_INPUT, REGRESSION = 2, 1
out = Console()


def refuse(field: str, message: str) -> typer.Exit:
    """Bad input: one line naming the option, exit 2, before anything runs (D183)."""
    console.print(f"gate: {field}: {message}", soft_wrap=True)
    return typer.Exit(BAD_INPUT)


def candidate_of(candidate: str) -> tuple[str, str | None]:
    """(the candidate as the comparison names it, its endpoint URL or None): a URL names an
    agent at that endpoint, anything else a model of the configured agent (D180)."""
    if candidate.startswith(("http://", "https://")):
        try:
            url = httpx.URL(candidate)
        except httpx.InvalidURL as error:
            raise refuse("--candidate", f"not a URL: {error}") from None
        if not url.host:
            raise refuse("--candidate", "the endpoint URL names no host")
        return candidate, candidate
    try:
        return Runner(model=candidate).model, None
    except ValidationError as error:
        raise refuse("--candidate", error.errors()[0]["msg"]) from None


def gate(
    tenant: Annotated[str, typer.Option(help="The tenant whose cases run")],
    agent: Annotated[str, typer.Option(help="The agent whose confirmed cases run")],
    candidate: Annotated[
        str, typer.Option(help="A model name, or an agent endpoint URL (http(s)://…)")
    ],
    baseline: Annotated[
        str | None,
        typer.Option(help="The current runner's model (default: each case's own model)"),
    ] = None,
    conversations: Annotated[int, typer.Option(min=1, max=20, help="Per case and side")] = 3,
    effort: Annotated[Effort, typer.Option(help="The agent's effort")] = "medium",
    pr: Annotated[
        int | None, typer.Option(min=1, help="Comment the table once on this pull request")
    ] = None,
    repository: Annotated[
        str | None,
        typer.Option(help="owner/name of the pull request (default: the agent register's)"),
    ] = None,
    commit: Annotated[
        str | None, typer.Option(help="The commit tested (GITHUB_SHA): one comment per commit")
    ] = None,
) -> None:
    """Run the agent's confirmed cases on the current runner and on the candidate; print the
    table; exit 1 when a case that passed now fails on the candidate, 0 otherwise, 2 on bad
    input. Each case runs as the person who confirmed it, as at night."""
    label, endpoint = candidate_of(candidate)
    if baseline is not None:
        try:
            baseline = Runner(model=baseline).model
        except ValidationError as error:
            raise refuse("--baseline", error.errors()[0]["msg"]) from None
    if repository is not None:
        try:
            split_repository(repository)
        except TrackerRefused:
            raise refuse("--repository", f"{repository!r} is not owner/name") from None
    settings = process_settings()

    async def work(rt: Runtime) -> tuple[dict[str, Any], str]:
        try:
            case_ids = await confirmed_case_ids(rt.pool, tenant, agent)
        except DomainError as error:
            raise refuse("--agent", str(error)) from None
        client = None
        if endpoint is not None:
            a = settings.agent
            client = agent_client_from_settings(a.kind, endpoint, a.api_key, None)
        comparer = Comparer(rt.given().case_runner, rt.pool)

        async def as_confirmer(case: EvalCase) -> tuple[str | None, str | None]:
            """W101 and decisions D103, as at night: the confirmer, asked again just now."""
            if case.confirmed_by is None:
                return None, NO_CONFIRMER
            reason = await asyncio.to_thread(
                why_confirmer_cannot, rt.store, tenant, case.confirmed_by, case.agent
            )
            return (None, reason) if reason else (case.confirmed_by, None)

        try:
            comparison = await comparer.compare(
                Asker(tenant, GATE, None, service=True), uuid.uuid4(), agent,
                Sides(baseline, label, client), case_ids,
                conversations=conversations, effort=effort, runs_as=as_confirmer,
            )  # fmt: skip
        except NotConfigured as error:
            raise refuse("FEEDBACKLOOP_AGENT_URL", str(error)) from None
        refs = await case_refs(rt.pool, tenant, [UUID(c) for c in comparison.case_ids])
        view = comparison_view(comparison, refs)
        said = await commented(rt, settings, view) if pr is not None else ""
        return view, said

    async def commented(rt: Runtime, settings: Settings, view: dict[str, Any]) -> str:
        """The table on the pull request, once (D184); what happened, in one line."""
        tracker = settings.trackers.get(tenant)
        if tracker is None:
            return f"no tracker configured for tenant {tenant!r}: no comment made"
        where = repository
        if where is None:
            found = await asyncio.to_thread(registration, rt.store, tenant, agent)
            where = None if found is None else found.repository
        if where is None:
            return "no --repository and none in the agent register: no comment made"
        key = f"gate/{agent}/{label}/pr/{pr}/{commit or '-'}"
        link = f"/factory/evals/comparisons/{view['comparisonId']}"
        github = GitHubTracker(tracker.url, tracker.token.get_secret_value())
        try:
            url = await github.comment(
                f"{tracker.url}/{where}/issues/{pr}", markdown(view, link), key
            )
        except TrackerRefused as error:
            return f"the tracker refused the comment: {error}"
        except Exception as error:
            if not transient(error):
                raise
            return f"the tracker could not be reached: {type(error).__name__}"
        return f"commented on the pull request: {url}"

    view, said = run_operator(settings, work)
    table = Table(*HEADERS, title=headline(view))
    for row in rows(view):
        table.add_row(*row)
    out.print(table)
    out.print(f"comparison {view['comparisonId']}", soft_wrap=True)
    if said:
        out.print(said, soft_wrap=True)
    if view["regressed"]:
        raise typer.Exit(REGRESSION)
