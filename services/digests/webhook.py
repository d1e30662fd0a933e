"""Delivers each agent's weekly post to the hand-over webhook too, where one is configured
(SPEC W123: "through the same route the feedback hand-over uses").

A reader of the log, like the hand-over webhook, with the same signed delivery
(``SignedWebhook``): the body is the very CloudEvent the ``digest-posted`` topic carries (same
``id``), so a receiver de-duplicates either way. Each attempt is an event on the digest; an
agent whose delivery is settled is skipped when a restart meets its post again.
"""

import asyncio
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from eventsourcing.utils import get_topic

from contracts.digests import RecordDigestDelivery
from services.bus.command_bus import CommandBus, Issued
from services.digests.domain import Digest
from services.digests.published import POSTED
from services.followers.reader import Connection, Positioned
from services.kafka.publication import cloudevent_id, to_message
from services.reports.webhook import Attempt, SignedWebhook
from services.store.event_store import EventStore

NAME = "digest-webhook"
ACTOR = "system:digest-webhook"


class DigestWebhook:
    name = NAME
    transactional = False

    def __init__(
        self, store: EventStore, bus: CommandBus, webhook: SignedWebhook, *, source: str
    ) -> None:
        self.store, self.bus, self.webhook, self.source = store, bus, webhook, source
        self.topics = [get_topic(Digest.AgentPosted)]

    async def open(self, say: Callable[[str], None]) -> None:
        await self.webhook.open()

    async def close(self) -> None:
        await self.webhook.close()

    async def apply(self, conn: Connection, batch: Sequence[Positioned]) -> None:
        for item in batch:
            event: Any = item.event
            digest: Digest = await asyncio.to_thread(self.store.repository.get, event.originator_id)
            if event.agent_id not in digest.settled:
                await self.deliver(item)

    async def deliver(self, item: Positioned) -> None:
        event: Any = item.event

        async def record(attempt: Attempt) -> None:
            await self.bus.execute(
                Issued(
                    RecordDigestDelivery(
                        week=event.week,
                        agent_id=event.agent_id,
                        status_code=attempt.status_code,
                        error=attempt.error,
                        final=attempt.final,
                    ),
                    tenant_id=event.tenant_id,
                    actor=ACTOR,
                    command_id=f"{NAME}/{item.position}/{attempt.number}",
                    at=datetime.now(UTC),
                    service=True,
                )
            )

        body = to_message(POSTED, event, self.source).value
        delivery = cloudevent_id(event.originator_id, event.originator_version)
        await self.webhook.deliver(body, delivery, record)
