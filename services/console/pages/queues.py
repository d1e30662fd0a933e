"""Review queues: each queue of the tenant with its progress, a "Claim next" button for a
Reviewer, and what the reader holds now ("assigned to me"), each with a "Release" button.
The reads are the API's queries (``projections.review_queues``), the writes its commands
(``ClaimNext``, ``ReleaseClaim``), decided by the same rules (decisions D160–D164)."""

import uuid
from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from contracts.errors import DomainError
from contracts.queues import ClaimNext, ReleaseClaim
from projections.review_queues import (
    claims_held_by,
    list_queues,
    next_candidates,
    queue_progress,
)
from services.console.console import Console, Visitor
from services.console.page import Page
from services.edge.problems import status_of
from services.permissions.rules import READ_ALL, REVIEWER
from services.queues.api import day_and_week, zone_of

SHOWN_TO = ("Reviewer", "PlatformAdmin", "Observer")
Zone = Annotated[str, Query(alias="timeZone", min_length=1, max_length=64)]


def queues_routes(console: Console) -> APIRouter:
    router = APIRouter(include_in_schema=False)
    http = console.http

    async def shown(
        visitor: Visitor, time_zone: str = "UTC", status: int = 200, refusal: str | None = None
    ) -> Response:
        principal, now = visitor.principal, http.clock()
        day, week = day_and_week(now, zone_of(time_zone))
        rows = []
        for found in await list_queues(http.pool, principal.tenant_id):
            progress = await queue_progress(
                http.pool, principal.tenant_id, found["queue"], now=now, day_start=day,
                week_start=week,
            )  # fmt: skip
            rows.append({**found, "progress": progress})
        mine = await claims_held_by(http.pool, principal.tenant_id, principal.subject, now=now)
        return console.render(
            visitor,
            "queues.html",
            status,
            queues=rows,
            mine=mine,
            claims=visitor.holds(REVIEWER),
            time_zone=time_zone,
            refusal=refusal,
        )

    @router.get("/queues")
    async def queues(request: Request, time_zone: Zone = "UTC") -> Response:
        visitor = await console.visitor(request, reads=READ_ALL)
        return await shown(visitor, time_zone)

    @router.post("/queues/{queue}/claim-next")
    async def claim_next(request: Request, queue: str) -> Response:
        visitor = await console.writer(request)
        principal = visitor.principal
        candidates = await next_candidates(
            http.pool, principal.tenant_id, queue[:64], now=http.clock()
        )
        try:
            outcome = await http.execute(
                ClaimNext(queue=queue, candidates=candidates), principal, str(uuid.uuid4())
            )
        except (DomainError, ValueError) as error:
            message = error.message if isinstance(error, DomainError) else "no such queue"
            status = status_of(error) if isinstance(error, DomainError) else 422
            return await shown(visitor, status=status, refusal=message)
        await http.read_at("inbox", http.position(outcome, principal), principal)
        return console.see_other(request, f"/inbox/{outcome.result.report_id}", visitor)

    @router.post("/queues/claims/{report_id:uuid}/release")
    async def release(request: Request, report_id: UUID) -> Response:
        visitor = await console.writer(request)
        principal = visitor.principal
        try:
            outcome = await http.execute(
                ReleaseClaim(report_id=report_id), principal, str(uuid.uuid4())
            )
        except DomainError as error:
            return await shown(visitor, status=status_of(error), refusal=error.message)
        await http.read_at("review_queues", http.position(outcome, principal), principal)
        return console.see_other(request, "/queues", visitor)

    return router


QUEUES = Page("queues", "/queues", "Queues", SHOWN_TO, queues_routes)
