"""The Eval cases page: agent owners see each agent's cases — the definition (prompt,
mustGround, mustNotAssert, mustAssert, model), whether it is confirmed, its last run — and open
one: the last run with each conversation's three checks (SPEC W59–W64), the pass rate over
time, Confirm or Unconfirm (W74, W75) and Run (``eval_runs``). Reads are the read model's
(``projections.eval_cases``), writes the API's commands, so who may confirm or run is the
API's rule: a maintainer of the case's agent, as the register names them (decisions D23).
"""

import uuid
from typing import Annotated, Any
from urllib.parse import urlencode
from uuid import UUID

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from pydantic import ValidationError

from contracts.errors import DomainError, Refused
from contracts.evals import ConfirmEvalCaseCommand, RunEvalCase
from projections.eval_cases import get_case, page_cases
from services.console.console import Console, Visitor
from services.console.page import Page
from services.console.pages.eval_chart import HEIGHT, LEFT, WIDTH, pass_rate_chart
from services.console.pages.eval_comparisons import eval_comparison_routes
from services.console.pages.eval_runs import eval_run_routes, progress, start
from services.edge.problems import status_of
from services.evals.api import case_cursor
from services.permissions.rules import MAINTAINER, READ_ALL

PAGE_SIZE = 50
CONFIRMED = {"yes": True, "no": False}
EFFORTS = ("low", "medium", "high")
Text = Annotated[str | None, Query(max_length=512)]


def eval_cases_routes(console: Console) -> APIRouter:
    router = APIRouter(include_in_schema=False)
    router.include_router(eval_run_routes(console))
    router.include_router(eval_comparison_routes(console))
    http = console.http

    @router.get("/eval-cases")
    async def cases(
        request: Request, agent: Text = None, confirmed: Text = None, before: Text = None
    ) -> Response:
        visitor = await console.visitor(request, reads=READ_ALL)
        if confirmed and confirmed not in CONFIRMED:
            raise Refused("confirmed is one of yes, no", field="confirmed")
        principal = visitor.principal
        found, next_page = await http.keyed_page(
            "cases",
            before or None,
            principal,
            lambda after: page_cases(
                http.pool,
                principal.tenant_id,
                agent=agent or None,
                confirmed=CONFIRMED.get(confirmed or ""),
                after=case_cursor(after),
                limit=PAGE_SIZE,
            ),
        )
        kept = {
            name: value for name, value in (("agent", agent), ("confirmed", confirmed)) if value
        }
        return console.render(
            visitor,
            "eval_cases.html",
            current="eval-cases",
            cases=found,
            chosen={"agent": agent or "", "confirmed": confirmed or ""},
            older=f"/eval-cases?{urlencode({**kept, 'before': next_page})}" if next_page else None,
            first=f"/eval-cases?{urlencode(kept)}" if before else None,
        )

    @router.get("/eval-cases/{case_id:uuid}")
    async def case(request: Request, case_id: UUID) -> Response:
        visitor = await console.visitor(request, reads=READ_ALL)
        return await shown(visitor, case_id)

    async def shown(
        visitor: Visitor,
        case_id: UUID,
        status: int = 200,
        refusal: str | None = None,
    ) -> Response:
        # Decisions D23, D123: the page after a refused act is read by the page's rule before
        # the case is looked up, so a Requester alone is refused alike for any id.
        visitor.must_hold(READ_ALL)
        # A run of this person's that ended since is shown here, once; a recorded one is read
        # at its write, so the page shows it as the last run.
        watched = progress(visitor, case_id)
        if watched.recorded is not None:
            await http.read_at("eval_cases", watched.recorded, visitor.principal)
        found = await get_case(http.pool, visitor.principal.tenant_id, case_id)
        if found is None:
            return console.render(
                visitor, "not_found.html", 404, what=f"There is no eval case {case_id}."
            )
        return console.render(
            visitor,
            "eval_case.html",
            status,
            current="eval-cases",
            case=found,
            last=found["runs"][0] if found["runs"] else None,
            lines=pass_rate_chart(found["history"]),
            width=WIDTH,
            left=LEFT,
            height=HEIGHT,
            acts=visitor.holds(MAINTAINER),
            efforts=EFFORTS,
            progress=watched,
            refusal=refusal,
        )

    @router.post("/eval-cases/{case_id:uuid}/confirm")
    async def confirm(request: Request, case_id: UUID) -> Response:
        visitor = await console.writer(request)
        form = await request.form()
        try:
            outcome = await http.execute(
                ConfirmEvalCaseCommand(case_id=case_id, confirmed=form.get("confirmed") == "true"),
                visitor.principal,
                str(uuid.uuid4()),
            )
        except DomainError as error:
            return await shown(visitor, case_id, status_of(error), refused(error))
        await http.read_at(
            "eval_cases", http.position(outcome, visitor.principal), visitor.principal
        )
        return console.see_other(request, f"/eval-cases/{case_id}", visitor)

    @router.post("/eval-cases/{case_id:uuid}/runs")
    async def run(request: Request, case_id: UUID) -> Response:
        visitor = await console.writer(request)
        form = await request.form()
        try:
            order = RunEvalCase.model_validate(
                {"conversations": int(str(form.get("conversations") or 5)),
                 "effort": form.get("effort") or "medium"}
            )  # fmt: skip
        except (ValueError, ValidationError) as error:
            return await shown(visitor, case_id, 422, f"Run: {first_problem(error)}")
        start(request, visitor, case_id, order.model_dump(mode="json", by_alias=True))
        return console.see_other(request, f"/eval-cases/{case_id}", visitor)

    return router


def refused(error: DomainError) -> str:
    return f"Refused ({status_of(error)}): {error.message}"


def first_problem(error: Exception) -> str:
    if isinstance(error, ValidationError):
        problem = error.errors()[0]
        return f"{'.'.join(str(part) for part in problem['loc'])}: {problem['msg']}"
    return "conversations must be a whole number"


def verdict(run: dict[str, Any] | None) -> str:
    """A run in a word: passed, failed or never run."""
    if run is None:
        return "never run"
    return "passed" if run["summary"]["passed"] else "failed"


EVAL_CASES = Page(
    "eval-cases", "/eval-cases", "Eval cases", ("AssetMaintainer", "PlatformAdmin", "Observer"),
    eval_cases_routes,
)  # fmt: skip
