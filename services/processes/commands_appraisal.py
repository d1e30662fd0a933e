"""``feedbackloop appraise``, ``health`` and ``charter``: the appraisal's readers for people.

Free by default: each reads the appraisal read model and derives on read. The two paid passes
(``--probe``, ``--appraise``) run only when asked, each under its cap, through the agent client
eval runs use (FEEDBACKLOOP_AGENT_*); without a model they record nothing and say so.
"""

import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from contracts.appraisal import WriteCharter
from contracts.appraisal_records import RecordPassResults
from contracts.errors import DomainError
from projections import appraisal_queries as facts_model
from services.appraisal import doctor, passes
from services.appraisal.charter import EMPTY, parse_charter
from services.appraisal.health import health as health_of
from services.appraisal.reads import UNREADABLE, Scope, read_charter, read_facts
from services.appraisal.scan import chosen, readouts, scan_json
from services.bus.issued import Issued
from services.evals.agents import agent_client_from_settings
from services.processes.bootstrap import Runtime
from services.processes.lifetime import process_settings, run_operator

HELP = "The tenant's charter: show it, check a file, or write one (a person's act)."
Tenant = Annotated[str, typer.Option(help="The tenant whose records are read")]
Days = Annotated[int, typer.Option(min=1, max=3650, help="Read the runs of the last N days")]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table")]
Tests = Annotated[
    bool, typer.Option("--include-tests", help="Include development and test runs (hidden)")
]
out = Console()


async def charter_or_empty(runtime: Runtime, tenant: str) -> tuple[Any, bool]:
    try:
        return (await read_charter(runtime.pool, tenant)).charter, True
    except UNREADABLE:
        return EMPTY, False  # M16: unreadable marks the reading partial, never empty


def appraise(
    tenant: Tenant,
    days: Days = 30,
    kind: Annotated[
        str | None,
        typer.Option(
            help="Only runs asked from this surface (web, task, …); test implies --include-tests"
        ),
    ] = None,
    as_json: AsJson = False,
    include_tests: Tests = False,
    probe: Annotated[
        bool,
        typer.Option(
            "--probe",
            help="Paid: an intervention opinion per intervention (no replay: changes no label)",
        ),
    ] = False,
    max_probes: Annotated[int, typer.Option(min=1, help="Cap on opinion calls")] = 25,
    appraiser: Annotated[
        bool, typer.Option("--appraise", help="Paid: the quarantined appraiser, numbers only")
    ] = False,
    max_appraisals: Annotated[int, typer.Option(min=1, help="Cap on appraiser calls")] = 25,
) -> None:
    """Appraise the tenant's runs of the last N days: labels, the two valence sums (never
    netted), goals named or attributed, and which sources could be read.

    Free: derived from the records, no model involved. `--probe` and `--appraise` are the
    paid passes: they ask the configured agent (FEEDBACKLOOP_AGENT_URL, _MODEL), at most
    `--max-probes` / `--max-appraisals` calls, and record numbers only on the `appraisal`
    channel. `--probe` asks the model's opinion of each intervention without a replay (the
    service holds no transcript), so it changes no label (decisions D153). With no model
    configured they record nothing and say so.
    """
    settings = process_settings()
    agent = settings.agent
    client = agent_client_from_settings(agent.kind, agent.url, agent.api_key, agent.model)

    async def work(runtime: Runtime) -> dict[str, Any]:
        now = datetime.now(UTC)
        scope = Scope(since=now - timedelta(days=days))
        facts = await read_facts(runtime.pool, tenant, scope)
        charter, readable = await charter_or_empty(runtime, tenant)
        ran: dict[str, Any] = {}
        if probe or appraiser:
            runs, _ = chosen(facts, kind, include_tests)
            to_pass = [passes.RunToPass(r.run.run_id, r.errors)
                       for r in readouts(facts, runs, charter, now)]  # fmt: skip
            ran = await paid(runtime, tenant, client, agent.model, to_pass, probe, max_probes,
                             appraiser, max_appraisals)  # fmt: skip
            facts = await read_facts(runtime.pool, tenant, scope)  # with what they recorded
        return scan_json(facts, charter, now, kind=kind, include_tests=include_tests,
                         charter_readable=readable, passes=ran)  # fmt: skip

    body = run_operator(settings, work)
    if as_json:
        out.print_json(json.dumps(body, default=str))
        return
    table = Table("field", "value", title=f"appraisal of {tenant}, last {days} days")
    for name, value in body.items():
        table.add_row(name, json.dumps(value) if isinstance(value, dict) else str(value))
    out.print(table)


async def paid(
    runtime: Runtime, tenant: str, client: Any, model: str | None,
    runs: list[passes.RunToPass], probe: bool, max_probes: int, appraiser: bool,
    max_appraisals: int,
) -> dict[str, Any]:  # fmt: skip
    """Run the passes asked for, recording through the command bus; a bar shows the runs."""
    with Progress(TextColumn("{task.description}"), MofNCompleteColumn()) as bar:
        task = bar.add_task("paid passes: runs recorded", total=len(runs) * (probe + appraiser))

        async def record(command: RecordPassResults) -> object:
            issued = Issued(command, tenant, "feedbackloop-cli", str(uuid.uuid4()),
                            datetime.now(UTC))  # fmt: skip
            outcome = await runtime.bus.execute(issued)
            bar.advance(task)
            return outcome

        ran: dict[str, Any] = {}
        if probe:
            report = await passes.ask_intervention_opinions(runs, client, model, max_probes, record)
            ran["probe"] = report.as_json()
        if appraiser:
            report = await passes.appraiser(runs, client, model, max_appraisals, record)
            ran["appraiser"] = report.as_json()
    for name, report in ran.items():
        out.print(f"{name}: {report['said']}", soft_wrap=True)
    return ran


def health(tenant: Tenant, days: Days = 30, as_json: AsJson = False,
           include_tests: Tests = False) -> None:  # fmt: skip
    """Run-level counters of the last N days: goal drift, null and reopened steps as per-run
    shares with their denominators, step findings, and the doctor's findings (a charter line
    past its setpoint on each of the last ten runs)."""

    async def work(runtime: Runtime) -> dict[str, Any]:
        now = datetime.now(UTC)
        facts = await read_facts(runtime.pool, tenant, Scope(since=now - timedelta(days=days)))
        charter, _ = await charter_or_empty(runtime, tenant)
        runs, _ = chosen(facts, None, include_tests)
        last = [doctor.RunSnapshot(r.completed_at, r.counters)
                for r in sorted(runs, key=lambda r: r.completed_at, reverse=True)]  # fmt: skip
        body = health_of(facts.runs).as_json()
        body["doctor"] = doctor.findings(charter, last)
        body["runsUnreadable"] = facts.damaged_runs
        return body

    body = run_operator(process_settings(), work)
    if as_json:
        out.print_json(json.dumps(body))
        return
    table = Table("counter", "value", title=f"health of {tenant}, last {days} days")
    for name, value in body.items():
        table.add_row(name, json.dumps(value) if isinstance(value, dict | list) else str(value))
    out.print(table)


def charter_show(tenant: Tenant, as_json: AsJson = False) -> None:
    """The tenant's charter as written, its lines in rank order and its findings."""

    async def work(runtime: Runtime) -> Any:
        return await facts_model.charter_row(runtime.pool, tenant)

    row = run_operator(process_settings(), work)
    if row is None:
        out.print(f"{tenant} has no charter: an empty one (nothing attributed to a line)")
        return
    lines = json.loads(row["lines"])
    if as_json:
        out.print_json(json.dumps({"lines": lines, "findings": json.loads(row["findings"]),
                                   "writtenBy": row["written_by"]}))  # fmt: skip
        return
    table = Table("rank", "id", "text", "sensor", title=f"charter of {tenant}")
    for line in lines:
        sensor = line["sensor"]
        shown = "" if sensor is None else f"{sensor['kind']} ≤ {sensor['setpoint']}"
        table.add_row(str(line["rank"]), line["id"], line["text"], shown)
    out.print(table)


def charter_check(path: Annotated[Path, typer.Argument(help="A charter TOML file")]) -> None:
    """Check a charter file as a write would, without writing: exit 1 naming the line."""
    try:
        charter = parse_charter(path.read_text(encoding="utf-8"))
    except DomainError as error:
        out.print(f"refused: {error.message}", soft_wrap=True)
        raise typer.Exit(1) from None
    out.print(f"ok: {len(charter.lines)} line(s)")
    for finding in charter.findings:
        out.print(f"finding: {finding}")


def charter_write(
    path: Annotated[Path, typer.Argument(help="A charter TOML file")],
    tenant: Tenant,
    by: Annotated[str, typer.Option(help="The person writing it (never a service)")],
) -> None:
    """Write the tenant's charter from a file: a person's act (SPEC M07–M16)."""
    document = path.read_text(encoding="utf-8")

    async def work(runtime: Runtime) -> Any:
        # A person's act at this machine's console: a PlatformAdmin, as the other operator
        # commands are (the role rules permit WriteCharter to PlatformAdmin only).
        issued = Issued(WriteCharter(document=document), tenant, by, str(uuid.uuid4()),
                        datetime.now(UTC), roles=frozenset({"PlatformAdmin"}))  # fmt: skip
        return (await runtime.bus.execute(issued)).result

    try:
        written = run_operator(process_settings(), work)
    except DomainError as error:
        out.print(f"refused: {error.message}", soft_wrap=True)
        raise typer.Exit(1) from None
    out.print(f"written: {written.lines} line(s)")
    for finding in written.findings:
        out.print(f"finding: {finding}")


def register(app: typer.Typer) -> None:
    """The appraisal readers on the CLI: ``appraise``, ``health``, ``charter show|check|write``."""
    app.command()(appraise)
    app.command()(health)
    charter_app = typer.Typer(help=HELP, no_args_is_help=True)
    charter_app.command("show")(charter_show)
    charter_app.command("check")(charter_check)
    charter_app.command("write")(charter_write)
    app.add_typer(charter_app, name="charter")
