"""``feedbackloop exports feedback|reports|runs``: a tenant's feedback, Inbox reports (with
their lifecycle) or eval runs written to a file as CSV or JSON Lines, filtered as the API's
lists are, read a page at a time under a progress bar (decisions D210–D213).

The operator reads with the database's credentials, as a PlatformAdmin of the tenant named
under the actor ``operator:<login>`` (decisions D28); each export is one row of the tenant's
audit at the CLI's door, as the API's and the console's are (D212)."""

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, get_args

import typer
from rich.progress import MofNCompleteColumn, Progress, TimeRemainingColumn

from contracts.feedback import FeedbackKind, SubjectKind
from contracts.reports import Category, Kind, ReviewStatus
from projections.inbox import InboxFilter
from services.edge.auth import Principal
from services.edge.exports import Export, Format, audited, chunks, snapshot
from services.evals.export import runs_export
from services.feedback.export import feedback_export
from services.permissions.doors import CLI
from services.processes.bootstrap import Runtime
from services.processes.commands_access import Tenant, operator
from services.processes.lifetime import console, process_settings, run_operator
from services.reports.export import reports_export

HELP = (
    "A tenant's feedback, reports or eval runs as CSV or JSON Lines, filtered as the API's "
    "lists are; every export is a row of the tenant's audit."
)
Out = Annotated[Path, typer.Option(help="The file to write (replaced if it exists)")]
FormatOption = Annotated[
    str, typer.Option("--format", help="csv (formula-safe, every cell quoted) or jsonl")
]


def chosen(name: str, value: str | None, allowed: tuple[str, ...]) -> str | None:
    """A filter's value, refused (exit 2, naming the option) unless it is one of ``allowed``."""
    if value is not None and value not in allowed:
        raise typer.BadParameter(f"{name} is one of {', '.join(allowed)}", param_hint=f"--{name}")
    return value


def written(tenant: str, command: str, form: str, out: Path, export: Callable[[], Export]) -> None:
    """Write ``export`` to ``out`` under a progress bar, after its audit row."""
    checked: Format = "csv" if chosen("format", form, ("csv", "jsonl")) == "csv" else "jsonl"
    wanted = export()

    async def write(rt: Runtime) -> int:
        at = datetime.now(UTC)
        principal = Principal(tenant, operator(), frozenset(), roles=frozenset({"PlatformAdmin"}))
        audited(rt.bus.audit, principal, CLI.name, f"exports {command} ({checked})", at)
        columns = (
            *Progress.get_default_columns()[:-1],
            MofNCompleteColumn(),
            TimeRemainingColumn(),
        )
        done = 0
        async with snapshot(rt.pool) as conn:
            total = await wanted.count(conn)
            with (
                out.open("w", newline="", encoding="utf-8") as file,
                Progress(*columns, console=console) as progress,
            ):
                bar = progress.add_task(wanted.name, total=total)
                async for text, rows in chunks(wanted, checked, conn):
                    file.write(text)
                    done += rows
                    progress.update(bar, completed=done)
        await rt.bus.flush_audit()
        return done

    done = run_operator(process_settings(), write)
    console.print(f"wrote {done} {wanted.name} rows of {tenant} to {out}")


def exports_feedback(
    tenant: Tenant,
    out: Out,
    form: FormatOption = "csv",
    subject_kind: Annotated[str | None, typer.Option(help="Only on this kind of subject")] = None,
    subject_ref: Annotated[str | None, typer.Option(help="Only on this subject")] = None,
    kind: Annotated[str | None, typer.Option(help="Only this kind of feedback")] = None,
) -> None:
    """The tenant's feedback, newest first: the rows and filters of GET /factory/feedback."""
    written(
        tenant, "feedback", form, out,
        lambda: feedback_export(
            tenant,
            subject_kind=chosen("subject-kind", subject_kind, tuple(SubjectKind)),
            subject_ref=subject_ref,
            kind=chosen("kind", kind, tuple(FeedbackKind)),
        ),
    )  # fmt: skip


def exports_reports(
    tenant: Tenant,
    out: Out,
    form: FormatOption = "csv",
    status: Annotated[str | None, typer.Option(help="Only reports in this review state")] = None,
    category: Annotated[str | None, typer.Option(help="Only this category")] = None,
    kind: Annotated[str | None, typer.Option(help="Only this kind of wrong answer")] = None,
    agent: Annotated[str | None, typer.Option(help="Only on this agent")] = None,
    addressee: Annotated[str | None, typer.Option(help="Addressee contains this")] = None,
) -> None:
    """The tenant's Inbox, newest change first, each report with its lifecycle: the rows and
    filters of GET /factory/reports/inbox."""
    where = InboxFilter(
        chosen("status", status, get_args(ReviewStatus)),
        chosen("category", category, get_args(Category)),
        chosen("kind", kind, get_args(Kind)),
        agent,
        addressee,
    )
    written(tenant, "reports", form, out, lambda: reports_export(tenant, where))


def exports_runs(
    tenant: Tenant,
    out: Out,
    form: FormatOption = "csv",
    agent: Annotated[str | None, typer.Option(help="Only the cases of this agent")] = None,
    confirmed: Annotated[
        bool | None, typer.Option("--confirmed/--unconfirmed", help="Only (un)confirmed cases")
    ] = None,
) -> None:
    """Every eval run of the tenant's cases, newest first, with its summary and
    conversations: the cases' filters of GET /factory/evals/cases."""
    written(
        tenant, "runs", form, out, lambda: runs_export(tenant, agent=agent, confirmed=confirmed)
    )
