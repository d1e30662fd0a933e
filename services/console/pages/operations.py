"""The Operations page: where every reader of the log stands (what ``feedbackloop status``
shows, from the same query), the visitor's tenant's parked events with Retry, and the
scheduler's orders. Readers are instance figures and shown to every watcher; a parked
event's content and its Retry are an Operator's of the tenant it belongs to, and everything
else parked is a count (decisions D94). Retry releases the aggregate as ``feedbackloop parked
retry`` does (``services.followers.parked.release``), through the operations context's
``retry``, the API's own. The parked inbound messages naming the tenant are listed too, each
sent again by ``retry_message`` (the CLI's ``send_again``); the others a count (D96). The
tenant's agents' webhooks that fail are listed from ``webhook_health``, the answer of ``GET
/factory/operations/agent-webhooks`` (D196, D257)."""

from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import Response

from contracts.errors import DomainError, NotFound
from services.console.console import Console, Visitor
from services.console.page import Page
from services.edge.problems import status_of
from services.operations import reading
from services.operations.api import LISTED, MESSAGES
from services.owners.reading import webhook_health
from services.permissions.rules import OPERATOR, require

Cursor = Annotated[str | None, Query(max_length=1024)]


def operations_routes(console: Console) -> APIRouter:
    router = APIRouter(include_in_schema=False)
    http = console.http

    async def shown(
        visitor: Visitor,
        before: str | None = None,
        status: int = 200,
        refusal: str | None = None,
        done: str | None = None,
        messages_before: str | None = None,
    ) -> Response:
        # Decisions D123: the page after a refused retry is this page, read by its own rule
        # before anything is listed; any signed-in person may post the form.
        visitor.must_hold(reading.WATCHERS)
        principal = visitor.principal
        operator = visitor.holds(OPERATOR)
        parked: dict[str, object] = {}

        async def fetch(after: str | None) -> tuple[list[dict[str, object]], str | None]:
            page, last = await reading.parked(http.pool, principal.tenant_id, operator, after)
            parked.update(page)
            return page["items"], last

        items, next_before = await http.keyed_page(LISTED, before, principal, fetch)
        messages: dict[str, object] = {}

        async def fetch_messages(after: str | None) -> tuple[list[dict[str, object]], str | None]:
            page, last = await reading.messages(http.pool, principal.tenant_id, operator, after)
            messages.update(page)
            return page["items"], last

        listed, next_messages = await http.keyed_page(
            MESSAGES, messages_before, principal, fetch_messages
        )
        webhooks = await webhook_health(http.pool, principal.tenant_id)
        return console.render(
            visitor,
            "operations.html",
            status,
            current="operations",
            failing_webhooks=[hook for hook in webhooks if hook["failing"]],
            webhooks=len(webhooks),
            readers=await reading.readers(http.pool),
            parked=items,
            own=parked["own"],
            others=parked["others"],
            operator=operator,
            orders=await reading.orders(http.pool, principal.tenant_id),
            older=f"/operations?{urlencode({'before': next_before})}" if next_before else None,
            first="/operations" if before else None,
            messages=listed,
            own_messages=messages["own"],
            other_messages=messages["others"],
            older_messages=(
                f"/operations?{urlencode({'messages': next_messages})}" if next_messages else None
            ),
            first_messages="/operations" if messages_before else None,
            refusal=refusal,
            done=done,
        )

    @router.get("/operations")
    async def operations(
        request: Request, before: Cursor = None, messages: Cursor = None
    ) -> Response:
        visitor = await console.visitor(request, reads=reading.WATCHERS)
        return await shown(visitor, before or None, messages_before=messages or None)

    @router.post("/operations/parked/{reader}/{position}/retry")
    async def retry(
        request: Request,
        reader: Annotated[str, Path(min_length=1, max_length=200)],
        position: Annotated[int, Path(ge=1)],
    ) -> Response:
        visitor = await console.writer(request)
        try:
            require(visitor.principal.roles, OPERATOR, "retrying a parked event")
            principal = visitor.principal
            released = await reading.retry(
                http.pool, principal.tenant_id, reader, position, principal.subject
            )
            if not released:
                raise NotFound(f"{reader} has nothing of yours parked at position {position}")
        except DomainError as error:
            return await shown(visitor, None, status_of(error), error.message)
        return await shown(
            visitor,
            done=f"Released {released} parked event{'s' if released != 1 else ''} of {reader}: "
            "the reader applies them on its next wake.",
        )

    @router.post("/operations/parked-messages/{position}/retry")
    async def retry_message(request: Request, position: Annotated[int, Path(ge=1)]) -> Response:
        visitor = await console.writer(request)
        try:
            require(visitor.principal.roles, OPERATOR, "retrying a parked message")
            principal = visitor.principal
            await reading.retry_message(
                http.pool, http.kafka, principal.tenant_id, position, principal.subject
            )
        except reading.NoKafka as error:
            # The API answers 503; the page says why with a 409, since the console swaps a
            # 4xx answer into the page and leaves a 5xx one unshown (layout's htmx config).
            return await shown(visitor, None, 409, error.message)
        except DomainError as error:
            return await shown(visitor, None, status_of(error), error.message)
        return await shown(
            visitor,
            done=f"Sent parked message {position} again to its topic: the inbound consumers "
            "apply it (once, by its identity).",
        )

    return router


OPERATIONS = Page("operations", "/operations", "Operations", reading.WATCHERS, operations_routes)
