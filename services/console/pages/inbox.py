"""The Inbox page: reviewers list, filter and page the reports kept for review, open one (its
words, its labelled block as a table, the evidence, its lifecycle) and decide it — Triage,
Resolve with what changed, Won't fix with a reason — through the API's own command
(``ReviewReportCommand``), so the role rules and ``reviewedBy`` are the API's (SPEC W30–W33).
"""

import uuid
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Annotated, get_args
from urllib.parse import urlencode
from uuid import UUID

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from pydantic import ValidationError

from contracts.errors import DomainError, Refused
from contracts.labelled_block import LABELS, parse
from contracts.reports import Category, Kind, ReviewReport, ReviewReportCommand, ReviewStatus
from projections.inbox import SCHEMA as INBOX_SCHEMA
from projections.inbox import InboxFilter, get_report, list_inbox, report_lifecycle
from projections.report_annotations import annotations_of
from services.console.console import Console, Visitor
from services.console.page import Page
from services.console.pages.annotating import ADDRESSEES, KINDS, annotating_routes
from services.console.pages.lifting import lifting_routes, preview
from services.edge.exports import Format, export_download
from services.edge.problems import status_of
from services.permissions.rules import LIFTERS, READ_ALL, REVIEWER, reads_notes, reads_report
from services.reports.api import says_what_changed
from services.reports.export import reports_export

# SPEC C52, decisions D23: a Reviewer decides reports (the rule engine's own tuple, so the
# buttons follow the rule). The Inbox reads the whole tenant: every role but a Requester's reads
# it (READ_ALL, the API's rule for GET /factory/reports/inbox); a Requester alone opens only the
# reports they filed (as GET /factory/reports/{id}). The navigation offers it to those who look
# after reports.
DECIDERS = REVIEWER
SHOWN_TO = ("Reviewer", "PlatformAdmin", "Observer")
PAGE_SIZE = 50
FILTERS = ("status", "category", "kind", "agent", "addressee")
CHOICES = {
    "status": get_args(ReviewStatus),
    "category": get_args(Category),
    "kind": get_args(Kind),
}
Text = Annotated[str | None, Query(max_length=512)]


def age(since: str | None, now: datetime) -> str:
    """How long ago, in the one unit a reader takes in at a glance."""
    if since is None:
        return "—"
    seconds = max(0, int((now - datetime.fromisoformat(since)).total_seconds()))
    for unit, size in (("d", 86_400), ("h", 3_600), ("min", 60)):
        if seconds >= size:
            return f"{seconds // size} {unit}"
    return f"{seconds} s"


def block_rows(text: str | None) -> list[tuple[str, str]]:
    """The labelled block of a wrong-answer report as (label, value) rows, in SPEC W05's
    order; unknown labels after them. Read with the contracts' tolerant parser, never raising."""
    block = parse(text)
    if block is None:
        return []
    model = block.model
    values = (
        block.kind,
        block.thread,
        block.message,
        block.agent,
        None
        if model is None
        else model.actual + (f" (asked {model.requested})" if model.requested else ""),
        None
        if block.tools_called is None
        else ", ".join(f"{c.name}({c.arguments}) → {c.result}" for c in block.tools_called),
        block.answer_excerpt,
        block.expected,
        block.evidence,
        block.addressee,
    )
    rows = [(label, value) for label, value in zip(LABELS, values, strict=True) if value]
    return rows + list(block.extra.items())


def chosen_filters(*values: str | None) -> dict[str, str | None]:
    """The URL's filters, checked as the API checks them (a 422 naming the field)."""
    chosen = {name: value or None for name, value in zip(FILTERS, values, strict=True)}
    for name, allowed in CHOICES.items():
        if chosen[name] is not None and chosen[name] not in allowed:
            raise Refused(f"{name} is one of {', '.join(allowed)}", field=name)
    return chosen


def inbox_filter(chosen: dict[str, str | None]) -> InboxFilter:
    return InboxFilter(
        chosen["status"], chosen["category"], chosen["kind"], chosen["agent"], chosen["addressee"]
    )


def inbox_routes(console: Console) -> APIRouter:
    router = APIRouter(include_in_schema=False)
    router.include_router(lifting_routes(console))
    http = console.http

    @router.get("/inbox")
    async def inbox(
        request: Request,
        status: Text = None,
        category: Text = None,
        kind: Text = None,
        agent: Text = None,
        addressee: Text = None,
        before: Text = None,
    ) -> Response:
        visitor = await console.visitor(request, reads=READ_ALL)
        chosen = chosen_filters(status, category, kind, agent, addressee)
        where = inbox_filter(chosen)
        items, older = await list_inbox(
            http.pool,
            visitor.principal.tenant_id,
            where,
            before=http.cursor(before or None, visitor.principal),
            limit=PAGE_SIZE,
        )
        kept = {name: value for name, value in chosen.items() if value}
        next_before = http.sealed(older, visitor.principal)
        now = http.clock()
        return console.render(
            visitor,
            "inbox.html",
            items=[{**item, "age": age(item["submittedAt"], now)} for item in items],
            chosen=chosen,
            choices=CHOICES,
            downloads={form: f"/inbox.{form}?{urlencode(kept)}" for form in ("csv", "jsonl")},
            older=f"/inbox?{urlencode({**kept, 'before': next_before})}" if next_before else None,
            first=f"/inbox?{urlencode(kept)}" if before else None,
        )

    @router.get("/inbox/{report_id:uuid}")
    async def item(request: Request, report_id: UUID) -> Response:
        visitor = await console.visitor(request)
        return await shown(visitor, report_id)

    def download_as(form: Format) -> Callable[..., Awaitable[Response]]:
        async def download(
            request: Request,
            status: Text = None,
            category: Text = None,
            kind: Text = None,
            agent: Text = None,
            addressee: Text = None,
        ) -> Response:
            """The Inbox under the page's filters as a file, the API's export (D210–D212)."""
            visitor = await console.visitor(request, reads=READ_ALL)
            where = inbox_filter(chosen_filters(status, category, kind, agent, addressee))
            export = reports_export(visitor.principal.tenant_id, where)
            response = export_download(http, request, export, form, visitor.principal)
            console.keep(response, visitor.session)
            return response

        return download

    async def shown(
        visitor: Visitor,
        report_id: UUID,
        status: int = 200,
        refusal: str | None = None,
        form: dict[str, str] | None = None,
    ) -> Response:
        principal = visitor.principal
        report = await get_report(
            http.pool, principal.tenant_id, report_id, reader=principal.subject
        )
        # Decisions D23, D100, D123: a Requester alone reads their own reports, here as in the
        # API (one rule, ``reads_report``), checked wherever the report is shown, a refused
        # decision's page included. Another's report answers exactly as an id that names none,
        # so the ids of others' reports cannot be told apart.
        if report is None or not reads_report(
            principal.roles, principal.subject, report["reporter"]
        ):
            return console.render(
                visitor, "not_found.html", 404, what=f"There is no report {report_id}."
            )
        # D170–D173: a Reviewer annotates another's submitted report; notes are theirs to read.
        own = report["reporter"] == principal.subject
        return console.render(
            visitor,
            "report.html",
            status,
            report=report,
            annotations=await annotations_of(
                http.pool,
                report_id,
                notes=reads_notes(principal.roles, principal.subject, report["reporter"]),
                schema=INBOX_SCHEMA,
            ),
            annotates=visitor.holds(DECIDERS) and not own and report["status"] != "Draft",
            kinds=KINDS,
            addressees=ADDRESSEES,
            rows=block_rows(report["extraContext"]),
            steps=await report_lifecycle(http.pool, report_id),
            decides=visitor.holds(DECIDERS) and report["status"] in ("New", "Triaged"),
            lifts=visitor.holds(LIFTERS) and report["category"] == "answer",
            lift=preview(report),
            refusal=refusal,
            form=form or {},
        )

    @router.post("/inbox/{report_id:uuid}/review")
    async def review(request: Request, report_id: UUID) -> Response:
        visitor = await console.writer(request)
        form = {k: v for k, v in (await request.form()).items() if isinstance(v, str)}
        given = {
            name: form[name].strip()
            for name in ("status", "change", "link", "reason")
            if form.get(name, "").strip()
        }
        try:
            decision = ReviewReport.model_validate(given)
            says_what_changed(decision)
            outcome = await http.execute(
                ReviewReportCommand(report_id=report_id, review=decision),
                visitor.principal,
                str(uuid.uuid4()),
            )
        except ValidationError as error:
            problem = error.errors()[0]
            field = ".".join(str(part) for part in problem["loc"]) or "status"
            return await shown(visitor, report_id, 422, f"{field}: {problem['msg']}", form)
        except DomainError as error:
            return await shown(
                visitor, report_id, status_of(error), await refused(error, report_id, visitor), form
            )
        await http.read_at("inbox", http.position(outcome, visitor.principal), visitor.principal)
        return console.see_other(request, f"/inbox/{report_id}", visitor)

    router.include_router(annotating_routes(console, shown))

    async def refused(error: DomainError, report_id: UUID, visitor: Visitor) -> str:
        """A refusal as a sentence; a decision someone else made first names them."""
        report = await get_report(
            http.pool, visitor.principal.tenant_id, report_id, reader=visitor.principal.subject
        )
        review = report["review"] if report else None
        if report and review and review["reviewedBy"] and status_of(error) == 409:
            return (
                f"Already {report['status']} by {review['reviewedBy']} at "
                f"{review['reviewedAt'][:16].replace('T', ' ')} UTC: {error.message}"
            )
        return error.message

    for form in get_args(Format):
        router.add_api_route(f"/inbox.{form}", download_as(form), methods=["GET"])

    return router


INBOX = Page("inbox", "/inbox", "Inbox", SHOWN_TO, inbox_routes)
