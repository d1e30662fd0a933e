"""HTTP routes of review queues: define and remove a queue, its progress, claim the next
report of a queue or a given one, release a claim, and the caller's claims ("assigned to me").

Reads are every role's that reads the tenant's Inbox (READ_ALL, decisions D23); each write
is one command, so the bus checks its role and writes its audit row whatever the route read
first (decisions D161)."""

from datetime import datetime, timedelta
from typing import Annotated, Any
from uuid import UUID
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from fastapi import APIRouter, Depends, Path, Query, Request
from pydantic import ValidationError

from contracts.errors import NotFound, Refused, echoed
from contracts.queues import (
    ClaimGiven,
    ClaimList,
    ClaimNext,
    ClaimReleased,
    ClaimReport,
    ClaimShown,
    DefineQueue,
    DefineQueueCommand,
    QueueDefined,
    QueueList,
    QueueProgress,
    QueueRemoved,
    ReleaseClaim,
    RemoveQueue,
)
from projections.review_queues import (
    Progress,
    claims_held_by,
    list_queues,
    next_candidates,
    queue_progress,
)
from services.edge.auth import Principal
from services.edge.bodies import no_body, read_command
from services.edge.http import Http
from services.edge.openapi import body
from services.edge.parameters import IdempotencyKey, MinPosition, command_id
from services.edge.problems import READ_ERRORS, WRITE_ERRORS

WRITE, READ = "factory.feedback.write", "factory.feedback.read"
QueuePath = Annotated[str, Path(min_length=1, max_length=64)]
TimeZone = Annotated[str, Query(alias="timeZone", min_length=1, max_length=64)]
EXAMPLE = {"filter": {"kind": "fabricated", "status": "New"}, "claimMinutes": 30}


def zone_of(name: str) -> ZoneInfo:
    """The reader's time zone (decisions D164): an IANA name, else 422 naming ``timeZone``."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise Refused(f"timeZone: no time zone {echoed(name)!r}", field="timeZone") from None


def day_and_week(now: datetime, zone: ZoneInfo) -> tuple[datetime, datetime]:
    """The reader's midnight today and on Monday of this ISO week, as instants."""
    local = now.astimezone(zone)
    midnight = local.replace(hour=0, minute=0, second=0, microsecond=0)
    monday = midnight - timedelta(days=local.weekday())
    return midnight, monday


def progress_json(queue: str, found: Progress, zone: str) -> dict[str, Any]:
    return QueueProgress(
        queue=queue,
        open=found.open,
        claimed=found.claimed,
        done_today=found.done_today,
        done_this_week=found.done_this_week,
        oldest_waiting=found.oldest_waiting.isoformat() if found.oldest_waiting else None,
        time_zone=zone,
    ).model_dump(by_alias=True, mode="json")


def named(queue: str) -> str:
    """The path's queue, as the contract bounds it (422 naming ``queue`` otherwise)."""
    try:
        RemoveQueue(queue=queue)
    except ValidationError as error:
        raise Refused(f"queue: {error.errors()[0]['msg']}", field="queue") from None
    return queue


def claim_answer(http: Http, outcome: Any, principal: Principal) -> dict[str, Any]:
    state = outcome.result
    return {
        "reportId": str(state.report_id),
        "queue": state.queue,
        "claimedBy": state.claimed_by,
        "claimedAt": state.claimed_at.isoformat(),
        "expiresAt": state.expires_at.isoformat(),
        "position": http.position(outcome, principal),
    }


def queue_routes(http: Http) -> APIRouter:
    router = APIRouter(tags=["review queues"])

    @router.put(
        "/factory/queues/{queue}",
        response_model=QueueDefined,
        responses=WRITE_ERRORS,
        openapi_extra=body(DefineQueue, EXAMPLE),
    )
    async def define_queue(
        queue: QueuePath,
        request: Request,
        principal: Annotated[Principal, Depends(http.scope(WRITE))],
        idempotency_key: IdempotencyKey = None,
    ) -> dict[str, Any]:
        """Define a queue of the tenant's Inbox, or replace what it says: its filter (agent,
        kind, category, status, age), its reviewers (empty: every Reviewer) and how long a
        claim holds. A Reviewer or a PlatformAdmin (decisions D161)."""
        said = await read_command(request, DefineQueue, frozenset())
        command = DefineQueueCommand(queue=named(queue), definition=said)
        outcome = await http.execute(
            command, principal, command_id(idempotency_key), idempotency_key
        )
        return {
            **outcome.result.model_dump(by_alias=True),
            "position": http.position(outcome, principal),
        }

    @router.delete("/factory/queues/{queue}", response_model=QueueRemoved, responses=WRITE_ERRORS)
    async def remove_queue(
        queue: QueuePath,
        request: Request,
        principal: Annotated[Principal, Depends(http.scope(WRITE))],
    ) -> dict[str, Any]:
        """Remove a queue: it offers nothing more; claims taken through it hold until they
        are released or expire. A Reviewer or a PlatformAdmin."""
        await no_body(request)
        command = RemoveQueue(queue=named(queue))
        outcome = await http.execute(command, principal, command_id(None))
        return {"queue": queue, "position": http.position(outcome, principal)}

    @router.get("/factory/queues", response_model=QueueList, responses=READ_ERRORS)
    async def queues(
        principal: Annotated[Principal, Depends(http.reading(READ))],
        time_zone: TimeZone = "UTC",
        min_position: MinPosition = None,
    ) -> dict[str, Any]:
        """The tenant's queues by name, each with its progress now (``timeZone``: whose
        today and week the done counts are, an IANA name; UTC by default)."""
        zone = zone_of(time_zone)
        await http.read_at("review_queues", min_position, principal)
        now = http.clock()
        day, week = day_and_week(now, zone)
        items = []
        for found in await list_queues(http.pool, principal.tenant_id):
            progress = await queue_progress(
                http.pool, principal.tenant_id, found["queue"], now=now, day_start=day,
                week_start=week,
            )  # fmt: skip
            shown = progress_json(found["queue"], progress, time_zone) if progress else None
            items.append({**found, "progress": shown})
        return {"items": items}

    @router.get(
        "/factory/queues/{queue}/progress", response_model=QueueProgress, responses=READ_ERRORS
    )
    async def progress(
        queue: QueuePath,
        principal: Annotated[Principal, Depends(http.reading(READ))],
        time_zone: TimeZone = "UTC",
        min_position: MinPosition = None,
    ) -> dict[str, Any]:
        """Open (waiting, unclaimed), claimed, done today and this week (closed, in the
        reader's ``timeZone``), and the oldest waiting report's submission (D164)."""
        zone = zone_of(time_zone)
        await http.read_at("review_queues", min_position, principal)
        now = http.clock()
        day, week = day_and_week(now, zone)
        found = await queue_progress(
            http.pool, principal.tenant_id, queue, now=now, day_start=day, week_start=week
        )
        if found is None:
            raise NotFound(f"no queue {echoed(queue)!r}", field="queue")
        return progress_json(queue, found, time_zone)

    @router.post(
        "/factory/queues/{queue}/claims",
        status_code=201,
        response_model=ClaimShown,
        responses=WRITE_ERRORS,
    )
    async def claim_next(
        queue: QueuePath,
        request: Request,
        principal: Annotated[Principal, Depends(http.scope(WRITE))],
        min_position: MinPosition = None,
    ) -> dict[str, Any]:
        """Claim the queue's next report: the oldest waiting one nobody holds (D163). Takes
        no body. Nothing waiting: 404. Two reviewers at once never get the same report."""
        await no_body(request)
        await http.read_at("review_queues", min_position, principal)
        candidates = await next_candidates(
            http.pool, principal.tenant_id, named(queue), now=http.clock()
        )
        command = ClaimNext(queue=queue, candidates=candidates)
        outcome = await http.execute(command, principal, command_id(None))
        return claim_answer(http, outcome, principal)

    @router.put(
        "/factory/reports/{report_id:uuid}/claim",
        response_model=ClaimShown,
        responses=WRITE_ERRORS,
        openapi_extra=body(ClaimGiven, {"queue": "fabricated"}),
    )
    async def claim_given(
        report_id: UUID,
        request: Request,
        principal: Annotated[Principal, Depends(http.scope(WRITE))],
    ) -> dict[str, Any]:
        """Claim this report through ``queue`` (its reviewers, its claim time). Held by
        another: 409 naming until when; held by the caller: the claim is taken again from
        now. Of two reviewers claiming at once exactly one wins (D163)."""
        said = await read_command(request, ClaimGiven, frozenset())
        command = ClaimReport(queue=said.queue, report_id=report_id)
        outcome = await http.execute(command, principal, command_id(None))
        return claim_answer(http, outcome, principal)

    @router.delete(
        "/factory/reports/{report_id:uuid}/claim",
        response_model=ClaimReleased,
        responses=WRITE_ERRORS,
    )
    async def release(
        report_id: UUID,
        request: Request,
        principal: Annotated[Principal, Depends(http.scope(WRITE))],
    ) -> dict[str, Any]:
        """Release a claim: its holder, or a PlatformAdmin for anyone's (D161). Not held
        (released or expired): 409."""
        await no_body(request)
        outcome = await http.execute(ReleaseClaim(report_id=report_id), principal, command_id(None))
        return {"reportId": str(report_id), "position": http.position(outcome, principal)}

    @router.get("/factory/claims/mine", response_model=ClaimList, responses=READ_ERRORS)
    async def mine(
        principal: Annotated[Principal, Depends(http.reading(READ))],
        min_position: MinPosition = None,
    ) -> dict[str, Any]:
        """The reports the caller holds now ("assigned to me"), soonest to expire first."""
        await http.read_at("review_queues", min_position, principal)
        items = await claims_held_by(
            http.pool, principal.tenant_id, principal.subject, now=http.clock()
        )
        return {"items": items}

    return router
