"""Delivers each hand-over to engineering triage's webhook, where one is configured.

A reader of the log (``services/followers/follower.py``). The body is the same CloudEvent the
hand-over
topic carries, signed with HMAC-SHA256 over the raw body (``X-Feedbackloop-Signature:
sha256=<hex>``). Each attempt is recorded as an event on the report; 5xx answers, 408, 429
and network errors are retried with exponential backoff, up to ``max_attempts``; any other 4xx
is final at once (``SignedWebhook``, shared with the weekly digest's posts). A hand-over that
was never received puts the report in the Inbox. Whether a hand-over is settled (received, or
given up on) is the report's own state, so a restart that meets a settled hand-over again
skips it instead of delivering it twice, and a parked one released later is delivered
whatever came after it. (Not the library's tracking record: it
keeps only the highest position, which would pass over a released one.)
"""

import asyncio
import hashlib
import hmac
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
from eventsourcing.utils import get_topic

from contracts.reports import RecordHandOverDelivery
from services.bus.command_bus import CommandBus, Issued
from services.followers.reader import Connection, Positioned
from services.kafka.publication import cloudevent_id, to_message
from services.reports.domain import Report
from services.reports.published import HAND_OVER
from services.store.event_store import EventStore

log = logging.getLogger(__name__)

NAME = "handover-webhook"
ACTOR = "system:handover-webhook"
RETRIED_4XX = {408, 429}


def signature(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Attempt:
    number: int
    status_code: int | None
    error: str | None
    final: bool


Record = Callable[[Attempt], Awaitable[None]]


class SignedWebhook:
    """POSTs CloudEvents to one webhook, signed, retrying what may pass on a later try: the
    delivery half every webhook reader shares (hand-overs here, weekly digests in
    ``services.digests.webhook``). Each attempt is told to ``record``; the caller keeps it as
    an event, so whether a delivery is settled is the aggregate's own state."""

    def __init__(
        self,
        *,
        url: str,
        secret: str,
        max_attempts: int = 5,
        backoff_seconds: float = 1.0,
        timeout_seconds: float = 10.0,
    ) -> None:
        self.url, self.secret = url, secret
        self.max_attempts, self.backoff = max_attempts, backoff_seconds
        self.timeout = timeout_seconds
        self._client: httpx.AsyncClient | None = None

    async def open(self) -> None:
        self._client = httpx.AsyncClient(timeout=self.timeout)

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def deliver(self, body: bytes, delivery_id: str, record: Record) -> str | None:
        """Deliver ``body`` until it is settled; answers the final error, or None when it was
        received. A stop meanwhile cancels the task, and the next leader resumes."""
        assert self._client is not None, "the follower opens the webhook before applying"
        headers = {
            "Content-Type": "application/cloudevents+json",
            "X-Feedbackloop-Signature": signature(self.secret, body),
            "X-Feedbackloop-Delivery": delivery_id,
        }
        error: str | None = None
        for attempt in range(1, self.max_attempts + 1):
            status, error = None, None
            try:
                response = await self._client.post(self.url, content=body, headers=headers)
                status = response.status_code
                if not 200 <= status < 300:
                    error = f"HTTP {status}"
            except httpx.HTTPError as exc:
                error = f"{type(exc).__name__}: {exc}"
            permanent = status is not None and 400 <= status < 500 and status not in RETRIED_4XX
            final = error is None or permanent or attempt == self.max_attempts
            await record(Attempt(attempt, status, error, final))
            if final:
                return error
            await asyncio.sleep(self.backoff * 2 ** (attempt - 1))
        return error


class HandOverWebhook:
    name = NAME
    transactional = False

    def __init__(
        self,
        store: EventStore,
        bus: CommandBus,
        *,
        url: str,
        secret: str,
        source: str,
        max_attempts: int = 5,
        backoff_seconds: float = 1.0,
        timeout_seconds: float = 10.0,
    ) -> None:
        self.store, self.bus, self.source = store, bus, source
        self.url = url
        self.webhook = SignedWebhook(
            url=url,
            secret=secret,
            max_attempts=max_attempts,
            backoff_seconds=backoff_seconds,
            timeout_seconds=timeout_seconds,
        )
        self.topics = [get_topic(Report.HandedOver)]

    async def open(self, say: Callable[[str], None]) -> None:
        await self.webhook.open()

    async def close(self) -> None:
        await self.webhook.close()

    async def apply(self, conn: Connection, batch: Sequence[Positioned]) -> None:
        for item in batch:
            report: Report = await asyncio.to_thread(
                self.store.repository.get, item.event.originator_id
            )
            if not report.delivery_settled:
                await self.deliver(item)

    async def deliver(self, item: Positioned) -> None:
        """Deliver one hand-over until it is settled."""
        event: Any = item.event
        body = to_message(HAND_OVER, event, self.source).value

        async def record(attempt: Attempt) -> None:
            await self.bus.execute(
                Issued(
                    RecordHandOverDelivery(
                        report_id=event.originator_id,
                        status_code=attempt.status_code,
                        error=attempt.error,
                        final=attempt.final,
                    ),
                    tenant_id=event.tenant_id,
                    actor=ACTOR,
                    command_id=f"{NAME}/{item.position}/{attempt.number}",
                    at=datetime.now(UTC),
                )
            )

        delivery = cloudevent_id(event.originator_id, event.originator_version)
        if error := await self.webhook.deliver(body, delivery, record):
            log.warning("hand-over %s not delivered: %s", event.originator_id, error)
