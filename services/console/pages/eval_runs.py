"""Running an eval case from the console, with live progress, and one conversation of a run.

Run asks the API's own route (``POST /factory/evals/cases/{id}/runs``) with the session's
bearer, in this process, as a task of its own: the run holds the request for as long as its
conversations take, and the page must not. So the route's rules hold unchanged (a person, a
maintainer of the case's agent, W56–W57), and the page polls a small fragment that reads the
runs under way (``services.evals.progress``) until the run is recorded or refused
(decisions D81). A run started here is watched by the process that serves the page: the run
and its progress live in the same process, as the task does.
"""

import asyncio
from dataclasses import dataclass
from typing import Annotated, Any
from uuid import UUID

import httpx
from fastapi import APIRouter, Path, Request
from fastapi.responses import Response

from projections.eval_cases import get_thread
from services.console.console import Console, Visitor
from services.evals.api import MAX_THREADS
from services.evals.progress import UNDER_WAY, UnderWay
from services.permissions.rules import READ_ALL

LOOPBACK = "http://console.internal"


@dataclass
class Started:
    """A run the console asked for: the API's answer once it has one."""

    task: "asyncio.Task[httpx.Response]"


# The runs this process's console started and whose answer no page has shown yet, by
# (tenant, case, person): the person who pressed Run is shown how it ended.
STARTED: dict[tuple[str, UUID, str], Started] = {}


async def run_through_api(
    app: Any, bearer: str, case_id: UUID, order: dict[str, Any]
) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=LOOPBACK, timeout=None) as client:
        return await client.post(
            f"/factory/evals/cases/{case_id}/runs",
            json=order,
            headers={"Authorization": f"Bearer {bearer}"},
        )


def start(request: Request, visitor: Visitor, case_id: UUID, order: dict[str, Any]) -> None:
    """Ask the API for the run, and return at once: the page watches it by polling."""
    task = asyncio.create_task(run_through_api(request.app, visitor.session.bearer, case_id, order))
    principal = visitor.principal
    STARTED[(principal.tenant_id, case_id, principal.subject)] = Started(task)


@dataclass(frozen=True)
class Progress:
    """What the progress fragment shows: the runs under way, whether this person's run is
    still starting, and how their last run ended (once, then it is the case's last run)."""

    runs: list[UnderWay]
    starting: bool
    ended: str | None = None
    recorded: str | None = None  # the position of the recorded run, to read the case at

    @property
    def polling(self) -> bool:
        return bool(self.runs) or self.starting


def progress(visitor: Visitor, case_id: UUID) -> Progress:
    """The case's runs under way, and how this person's last run ended: shown once, then
    forgotten (a recorded run is the case's last run from then on)."""
    principal = visitor.principal
    key = (principal.tenant_id, case_id, principal.subject)
    runs = UNDER_WAY.of_case(principal.tenant_id, case_id)
    started = STARTED.get(key)
    if started is None or not started.task.done():
        return Progress(runs, starting=started is not None and not runs)
    del STARTED[key]
    if started.task.cancelled() or started.task.exception() is not None:
        return Progress(runs, False, "The run stopped before it was recorded.")
    answer = started.task.result()
    body = answer.json() if answer.headers.get("content-type", "").endswith("json") else {}
    if answer.status_code == 201:
        verdict = "passed" if body["summary"]["passed"] else "failed"
        return Progress(runs, False, f"Run {body['runId']} {verdict}.", body["position"])
    detail = body.get("message") or answer.text  # services.edge.problems' shape
    return Progress(runs, False, f"The run was refused ({answer.status_code}): {detail}")


def eval_run_routes(console: Console) -> APIRouter:
    router = APIRouter(include_in_schema=False)
    http = console.http

    @router.get("/eval-cases/{case_id:uuid}/progress")
    async def watched(request: Request, case_id: UUID) -> Response:
        visitor = await console.visitor(request, reads=READ_ALL)
        shown = progress(visitor, case_id)
        if shown.recorded is not None:
            # The run is recorded: the case page shows it as its last run, read at its write.
            await http.read_at("eval_cases", shown.recorded, visitor.principal)
            return console.see_other(request, f"/eval-cases/{case_id}", visitor)
        return console.render(visitor, "eval_progress.html", case_id=case_id, progress=shown)

    @router.get("/eval-cases/{case_id:uuid}/runs/{run_id:uuid}/threads/{index}")
    async def thread(
        request: Request,
        case_id: UUID,
        run_id: UUID,
        index: Annotated[int, Path(ge=0, le=MAX_THREADS)],
    ) -> Response:
        visitor = await console.visitor(request, reads=READ_ALL)
        found = await get_thread(http.pool, visitor.principal.tenant_id, case_id, run_id, index)
        if found is None:
            return console.render(
                visitor,
                "not_found.html",
                404,
                what=f"There is no conversation {index} in run {run_id}.",
            )
        return console.render(
            visitor, "eval_thread.html", current="eval-cases", case_id=case_id, run_id=run_id,
            thread=found,
        )  # fmt: skip

    return router
