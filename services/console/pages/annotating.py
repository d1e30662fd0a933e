"""A Reviewer's annotations on the report page (decisions D170–D174): correct the Kind and
Addressee, add a tag, write a private note. Each form issues the API's own command, so the
role rules (a Reviewer, never on their own report) and the input rules are the API's; a
refusal re-renders the page with the field named and nothing recorded.
"""

import uuid
from collections.abc import Awaitable, Callable
from typing import get_args
from uuid import UUID

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import BaseModel, ValidationError

from contracts.annotations import (
    AddresseeRole,
    CorrectKind,
    CorrectReportKind,
    NoteReport,
    NoteReportCommand,
    TagReport,
    TagReportCommand,
)
from contracts.errors import DomainError
from contracts.reports import Kind
from services.console.console import Console, Visitor
from services.edge.problems import status_of

# What the page's forms offer: the closed sets the API takes.
KINDS = get_args(Kind)
ADDRESSEES = get_args(AddresseeRole)
Shown = Callable[..., Awaitable[Response]]  # the report page, with a refusal if any


def annotating_routes(console: Console, shown: Shown) -> APIRouter:
    router = APIRouter(include_in_schema=False)
    http = console.http

    async def issued(
        request: Request, report_id: UUID, read: Callable[[dict[str, str]], BaseModel]
    ) -> Response:
        visitor: Visitor = await console.writer(request)
        form = {k: v for k, v in (await request.form()).items() if isinstance(v, str)}
        try:
            command = read({k: v.strip() for k, v in form.items() if k != "csrf" and v.strip()})
            outcome = await http.execute(command, visitor.principal, str(uuid.uuid4()))
        except ValidationError as error:
            problem = error.errors()[0]
            field = ".".join(str(part) for part in problem["loc"] if part != "correction")
            return await shown(visitor, report_id, 422, f"{field}: {problem['msg']}", form)
        except DomainError as error:
            return await shown(visitor, report_id, status_of(error), error.message, form)
        await http.read_at("inbox", http.position(outcome, visitor.principal), visitor.principal)
        return console.see_other(request, f"/inbox/{report_id}", visitor)

    @router.post("/inbox/{report_id:uuid}/kind")
    async def correct(request: Request, report_id: UUID) -> Response:
        return await issued(
            request,
            report_id,
            lambda given: CorrectReportKind(
                report_id=report_id, correction=CorrectKind.model_validate(given)
            ),
        )

    @router.post("/inbox/{report_id:uuid}/tags")
    async def tag(request: Request, report_id: UUID) -> Response:
        return await issued(
            request,
            report_id,
            lambda given: TagReportCommand(
                report_id=report_id, tag=TagReport.model_validate(given).tag
            ),
        )

    @router.post("/inbox/{report_id:uuid}/notes")
    async def note(request: Request, report_id: UUID) -> Response:
        return await issued(
            request,
            report_id,
            lambda given: NoteReportCommand(
                report_id=report_id, note=NoteReport.model_validate(given).note
            ),
        )

    return router
