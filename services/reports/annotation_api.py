"""HTTP routes of a reviewer's annotations (decisions D170–D174): correct a report's Kind and
Addressee, tag it, add a private note. Each is a Reviewer's command (never on their own
report), idempotent under an ``Idempotency-Key`` as a review is (SPEC C11), and what a report
shows of them is on ``GET /factory/reports/{reportId}`` (``annotations``).

Mounted inside the reports' router (``/factory/reports``).
"""

from typing import Annotated, Any
from uuid import UUID

from fastapi import APIRouter, Depends, Request

from contracts.annotations import (
    CorrectKind,
    CorrectReportKind,
    NoteReport,
    NoteReportCommand,
    TagReport,
    TagReportCommand,
)
from contracts.answers import ReportWritten
from contracts.reports import STAMPED_REPORT_FIELDS
from services.edge.auth import Principal
from services.edge.bodies import read_command
from services.edge.http import Http
from services.edge.openapi import body
from services.edge.parameters import IdempotencyKey, command_id
from services.edge.problems import WRITE_ERRORS
from services.reports.api import WRITE, answer


def annotation_routes(http: Http) -> APIRouter:
    router = APIRouter()

    async def decided(command: Any, principal: Principal, key: str | None) -> dict[str, Any]:
        outcome = await http.execute(command, principal, command_id(key), key)
        return answer(http.position(outcome, principal), outcome)

    @router.post(
        "/{report_id:uuid}/kind",
        response_model=ReportWritten,
        responses=WRITE_ERRORS,
        openapi_extra=body(CorrectKind, {"kind": "fabricated", "addressee": "agent owner"}),
    )
    async def correct_kind(
        report_id: UUID,
        request: Request,
        principal: Annotated[Principal, Depends(http.scope(WRITE))],
        idempotency_key: IdempotencyKey = None,
    ) -> dict[str, Any]:
        """Correct a submitted wrong-answer report's Kind and Addressee (decisions D170,
        D171). The reporter's stay and are shown beside; the digest counts the corrected Kind
        for every week that ends after the correction."""
        correction = await read_command(request, CorrectKind, STAMPED_REPORT_FIELDS)
        command = CorrectReportKind(report_id=report_id, correction=correction)
        return await decided(command, principal, idempotency_key)

    @router.post(
        "/{report_id:uuid}/tags",
        response_model=ReportWritten,
        responses=WRITE_ERRORS,
        openapi_extra=body(TagReport, {"tag": "wrong-node"}),
    )
    async def tag(
        report_id: UUID,
        request: Request,
        principal: Annotated[Principal, Depends(http.scope(WRITE))],
        idempotency_key: IdempotencyKey = None,
    ) -> dict[str, Any]:
        """Tag a submitted report (decisions D172); a tag it has already changes nothing."""
        tagged = await read_command(request, TagReport, STAMPED_REPORT_FIELDS)
        command = TagReportCommand(report_id=report_id, tag=tagged.tag)
        return await decided(command, principal, idempotency_key)

    @router.post(
        "/{report_id:uuid}/notes",
        response_model=ReportWritten,
        responses=WRITE_ERRORS,
        openapi_extra=body(NoteReport, {"note": "Same node as last week's report."}),
    )
    async def note(
        report_id: UUID,
        request: Request,
        principal: Annotated[Principal, Depends(http.scope(WRITE))],
        idempotency_key: IdempotencyKey = None,
    ) -> dict[str, Any]:
        """Add a private note to a submitted report (decisions D173): read by Reviewers only,
        never by its reporter; sealed under the writer's key, so their erasure erases it."""
        noted = await read_command(request, NoteReport, STAMPED_REPORT_FIELDS)
        command = NoteReportCommand(report_id=report_id, note=noted.note)
        return await decided(command, principal, idempotency_key)

    return router
