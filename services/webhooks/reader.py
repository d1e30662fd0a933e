"""The one log reader of outgoing webhooks: it follows the events a context declares
(``OutgoingWebhook``) and posts each one not yet settled, signed (``SignedWebhook``),
recording every attempt through the context's command.

A reader of the log (``services/followers/follower.py``). Whether a delivery is settled
(received, or given up on) is its aggregate's own state, not the reader's position: a
restart that meets a settled event again skips it instead of delivering it twice, and a
parked event released later is delivered whatever came after it (the library's tracking
record keeps only the highest position, which would pass over a released one).
"""

import asyncio
import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from eventsourcing.utils import get_topic

from services.bus.command_bus import CommandBus
from services.bus.issued import Issued
from services.followers.follower import Connection, Positioned
from services.store.event_store import EventStore
from services.webhooks.declared import OutgoingWebhook
from services.webhooks.signed import Attempt, SignedWebhook

log = logging.getLogger(__name__)


class WebhookReader:
    transactional = False

    def __init__(
        self,
        store: EventStore,
        bus: CommandBus,
        declared: OutgoingWebhook,
        webhook: SignedWebhook,
        *,
        source: str,
    ) -> None:
        self.store, self.bus, self.declared = store, bus, declared
        self.webhook, self.source = webhook, source
        self.name = declared.name
        self.topics = [get_topic(declared.event)]

    async def open(self, say: Callable[[str], None]) -> None:
        await self.webhook.open()

    async def close(self) -> None:
        await self.webhook.close()

    async def apply(self, conn: Connection, batch: Sequence[Positioned]) -> None:
        for item in batch:
            event = item.event
            aggregate: Any = await asyncio.to_thread(self.store.repository.get, event.originator_id)
            if not self.declared.settled(aggregate, event):
                await self.deliver(item)

    async def deliver(self, item: Positioned) -> None:
        """Deliver one event until it is settled, each attempt recorded."""
        event = item.event
        body, delivery_id = self.declared.cloudevent(event, self.source)

        async def record(attempt: Attempt) -> None:
            await self.bus.execute(
                Issued(
                    self.declared.attempt(event, attempt),
                    tenant_id=event.tenant_id,
                    actor=f"system:{self.name}",
                    command_id=f"{self.name}/{item.position}/{attempt.number}",
                    at=datetime.now(UTC),
                    service=self.declared.as_service,
                )
            )

        if error := await self.webhook.deliver(body, delivery_id, record):
            log.warning("%s: %s not delivered: %s", self.name, event.originator_id, error)
