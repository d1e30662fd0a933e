"""'Make this an eval case' on an answer report (SPEC W41–W51): what the lift will fill in,
then the case it made. The preview is the evals context's own ``lift`` applied to the report
as the Inbox holds it, so it cannot say other than the lift does; the lift itself is the API's
command (``LiftEvalCase``), decided by its rules (who may lift, which report can be)."""

from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from fastapi import APIRouter, Request
from fastapi.responses import Response

from contracts.errors import DomainError
from contracts.evals import LiftEvalCase
from contracts.labelled_block import LabelledBlock, parse
from projections.eval_cases import get_case
from projections.inbox import get_report
from services.console.console import Console, NotForYou
from services.edge.problems import status_of
from services.evals.domain import case_id_for
from services.evals.lift import lift
from services.permissions.rules import READ_ALL

ASKED = "the user's message the reply answered, as the report keeps it"


@dataclass
class Previewed:
    """The report as the lift reads it (``services.evals.lift.SourceReport``); the question
    asked is kept with the report's events, not in the Inbox, so the preview names it."""

    status: str
    category: str
    facts: LabelledBlock | None
    prompt: str | None = ASKED
    context: list[str] = field(default_factory=list)

    def check_visible_to(self, actor: str) -> None:
        return None  # the Inbox answered only what this reader may see


def preview(report: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """What the lift will fill in, or why it will refuse (W49)."""
    status = "Draft" if report["status"] == "Draft" else "Submitted"
    try:
        definition = lift(Previewed(status, report["category"], parse(report["extraContext"])))
    except DomainError as refused:
        return None, refused.message
    return {
        "Agent": definition.agent,
        "Prompt": ASKED,
        "Must ground": ", ".join(definition.must_ground) or "—",
        "Must not assert": ", ".join(definition.must_not_assert) or "—",
        "Must assert": definition.must_assert or "—",
        "Model": "none pinned: the configured default runs it",
    }, None


def lifting_routes(console: Console) -> APIRouter:
    router = APIRouter(include_in_schema=False)
    http = console.http

    @router.post("/inbox/{report_id:uuid}/lift")
    async def lift_it(request: Request, report_id: UUID) -> Response:
        visitor = await console.writer(request)
        if not visitor.holds(READ_ALL):
            # The answer shows the Inbox's report: only a reader of the whole tenant gets it
            # (decisions D23); whoever may lift (LIFTERS) is one.
            raise NotForYou(visitor, READ_ALL)
        principal = visitor.principal
        try:
            outcome = await http.execute(
                LiftEvalCase(source=report_id), principal, f"lift/{report_id}"
            )
        except DomainError as error:
            report = await get_report(
                http.pool, principal.tenant_id, report_id, reader=principal.subject
            )
            return console.render(
                visitor,
                "lifted.html",
                status_of(error),
                report=report,
                case=None,
                refusal=error.message,
            )
        await http.read_at("eval_cases", http.position(outcome, principal), principal)
        case = await get_case(
            http.pool, principal.tenant_id, case_id_for(principal.tenant_id, report_id)
        )
        return console.render(visitor, "lifted.html", report=None, case=case, refusal=None)

    return router
