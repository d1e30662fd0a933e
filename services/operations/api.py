"""``/factory/operations``: how the instance's readers stand, the caller's tenant's parked
events with Retry, and the scheduler's orders (decisions D94). Operators act; a
PlatformAdmin and an Observer read (a parked event's content is an Operator's only)."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path
from fastapi.responses import JSONResponse

from contracts.errors import NotFound
from contracts.operations import (
    ParkedMessagesPage,
    ParkedPage,
    Readers,
    Released,
    SchedulerOrders,
    SentAgain,
)
from services.edge.auth import Principal
from services.edge.http import Http
from services.edge.parameters import Before, Limit
from services.edge.problems import READ_ERRORS, WRITE_ERRORS, error, error_responses
from services.operations import reading
from services.permissions.rules import OPERATOR, holds

ReaderName = Annotated[str, Path(min_length=1, max_length=200)]
# A log position is a PostgreSQL bigint: past it no row can be, so it is refused (422) at the door.
Position = Annotated[int, Path(ge=1, le=2**63 - 1)]
LISTED = "parked"  # the list's name in its cursors (the console's page opens them too)
MESSAGES = "parked-messages"


def operations_routes(http: Http) -> APIRouter:
    router = APIRouter(prefix="/factory/operations", tags=["operations"])
    watcher = Depends(http.holding(reading.WATCHERS))

    @router.get("/readers", response_model=Readers, responses=READ_ERRORS)
    async def readers(principal: Annotated[Principal, watcher]) -> dict[str, Any]:
        """Every reader of the log (and the scheduler): position, lag, parked, state and
        what stops it, as `feedbackloop status` shows them. Figures of the instance, no
        tenant's data."""
        return {"items": await reading.readers(http.pool)}

    @router.get("/parked", response_model=ParkedPage, responses=READ_ERRORS)
    async def parked(
        principal: Annotated[Principal, watcher], before: Before = None, limit: Limit = reading.PAGE
    ) -> dict[str, Any]:
        """Your tenant's parked events, by reader and position, a page at a time (to an
        Operator; a count to a PlatformAdmin or an Observer) and, as a count only,
        everything else parked (another tenant's events, inbound messages)."""
        operator = holds(principal.roles, OPERATOR)
        shown: dict[str, Any] = {}

        async def fetch(after: str | None) -> tuple[list[dict[str, Any]], str | None]:
            page, last = await reading.parked(
                http.pool, principal.tenant_id, operator, after, limit
            )
            shown.update(page)
            return page["items"], last

        items, next_page = await http.keyed_page(LISTED, before, principal, fetch)
        return {**shown, "items": items, "next": next_page}

    @router.get("/orders", response_model=SchedulerOrders, responses=READ_ERRORS)
    async def orders(principal: Annotated[Principal, watcher]) -> dict[str, Any]:
        """The scheduler's last tick, the orders it tries again or gave up, and your
        tenant's units that fail."""
        return await reading.orders(http.pool, principal.tenant_id)

    @router.post(
        "/parked/{reader}/{position}/retry", response_model=Released, responses=WRITE_ERRORS
    )
    async def retry(
        reader: ReaderName,
        position: Position,
        principal: Annotated[Principal, Depends(http.holding(OPERATOR))],
    ) -> dict[str, Any]:
        """Release the parked events of your aggregate parked at `position` (Operator): the
        running reader applies them in order; one that fails again is parked again. 404 when
        nothing of your tenant is parked there."""
        released = await reading.retry(
            http.pool, principal.tenant_id, reader, position, principal.subject
        )
        if not released:
            raise NotFound(f"{reader} has nothing of yours parked at position {position}")
        return {"released": released}

    @router.get("/parked-messages", response_model=ParkedMessagesPage, responses=READ_ERRORS)
    async def parked_messages(
        principal: Annotated[Principal, watcher], before: Before = None, limit: Limit = reading.PAGE
    ) -> dict[str, Any]:
        """Your tenant's parked inbound messages (those whose CloudEvents `tenantid` names
        it), by position, a page at a time (to an Operator; a count to a PlatformAdmin or an
        Observer), and a count of the others (decisions D96)."""
        operator = holds(principal.roles, OPERATOR)
        shown: dict[str, Any] = {}

        async def fetch(after: str | None) -> tuple[list[dict[str, Any]], str | None]:
            page, last = await reading.messages(
                http.pool, principal.tenant_id, operator, after, limit
            )
            shown.update(page)
            return page["items"], last

        items, next_page = await http.keyed_page(MESSAGES, before, principal, fetch)
        return {**shown, "items": items, "next": next_page}

    @router.post(
        "/parked-messages/{position}/retry",
        response_model=SentAgain,
        responses={**WRITE_ERRORS, **error_responses(503)},
    )
    async def retry_message(
        position: Position,
        principal: Annotated[Principal, Depends(http.holding(OPERATOR))],
    ) -> Any:
        """Send your tenant's parked message at `position` again to its topic (Operator), as
        `feedbackloop parked retry inbound --position P` does: the consumers apply it by its
        identity (never twice). 404 when none of yours is parked there; 409 when it was not
        kept whole; 503 when this service has no Kafka."""
        try:
            await reading.retry_message(
                http.pool, http.kafka, principal.tenant_id, position, principal.subject
            )
        except reading.NoKafka as exc:
            unavailable: JSONResponse = error(503, exc.code, exc.message)
            unavailable.headers["Retry-After"] = "30"
            return unavailable
        return {"sent": position}

    return router
