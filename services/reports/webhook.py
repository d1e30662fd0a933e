"""Delivers each hand-over to engineering triage's webhook, where one is configured.

The body is the same CloudEvent the hand-over topic carries, signed with HMAC-SHA256 over the
raw body (``X-Feedbackloop-Signature: sha256=<hex>``). Each attempt is recorded as an event on
the report; 5xx answers, 408, 429 and network errors are retried with exponential backoff, up
to ``max_attempts``; any other 4xx is final at once. A hand-over that was never received puts
the report in the Inbox. The dispatcher's position commits with the final attempt's event, so a
restart resumes with the first hand-over not yet settled.
"""

import asyncio
import hashlib
import hmac
import logging
from datetime import UTC, datetime
from typing import Any

import httpx
from eventsourcing.persistence import Notification, Tracking
from eventsourcing.utils import get_topic

from contracts.reports import RecordHandOverDelivery
from services.bus import CommandBus, Issued
from services.publication import cloudevent_id, to_message
from services.reports.domain import Report
from services.reports.published import HAND_OVER
from services.store import EventStore, read_log

log = logging.getLogger(__name__)

NAME = "handover-webhook"
ACTOR = "system:handover-webhook"
RETRIED_4XX = {408, 429}


def signature(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


class HandOverWebhook:
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
        self.store, self.bus = store, bus
        self.url, self.secret, self.source = url, secret, source
        self.max_attempts, self.backoff = max_attempts, backoff_seconds
        self.timeout = timeout_seconds
        self._topics = [get_topic(Report.HandedOver)]

    async def run(self, stop: asyncio.Event, idle_poll: float = 1.0) -> None:
        async with httpx.AsyncClient(timeout=self.timeout) as client:
            while not stop.is_set():
                try:
                    if not await self.step(client, stop):
                        await asyncio.wait_for(stop.wait(), timeout=idle_poll)
                except TimeoutError:
                    continue
                except Exception as error:  # the store away: try again later
                    log.warning("hand-over webhook: %s; will retry", error)
                    await asyncio.sleep(idle_poll)

    async def step(self, client: httpx.AsyncClient, stop: asyncio.Event) -> bool:
        recorder = self.store.process_recorder
        position = await asyncio.to_thread(recorder.max_tracking_id, NAME) or 0
        upto, notifications = await asyncio.to_thread(
            read_log, self.store, position, 50, self._topics
        )
        if upto <= position:
            return False
        for notification in notifications:
            if not await self.deliver(client, notification, stop):
                return False  # stopping mid-retry: the next start resumes this hand-over
        if not notifications or notifications[-1].id < upto:  # nothing of ours in between
            await asyncio.to_thread(recorder.insert_tracking, Tracking(NAME, upto))
        return True

    async def deliver(
        self, client: httpx.AsyncClient, notification: Notification, stop: asyncio.Event
    ) -> bool:
        """Deliver one hand-over until it is settled (True), or until asked to stop (False)."""
        event: Any = self.store.mapper.to_domain_event(notification)
        body = to_message(HAND_OVER, event, self.source).value
        headers = {
            "Content-Type": "application/cloudevents+json",
            "X-Feedbackloop-Signature": signature(self.secret, body),
            "X-Feedbackloop-Delivery": cloudevent_id(event.originator_id, event.originator_version),
        }
        for attempt in range(1, self.max_attempts + 1):
            status, error = None, None
            try:
                response = await client.post(self.url, content=body, headers=headers)
                status = response.status_code
                if not 200 <= status < 300:
                    error = f"HTTP {status}"
            except httpx.HTTPError as exc:
                error = f"{type(exc).__name__}: {exc}"
            permanent = status is not None and 400 <= status < 500 and status not in RETRIED_4XX
            final = error is None or permanent or attempt == self.max_attempts
            await self.bus.execute(
                Issued(
                    RecordHandOverDelivery(
                        report_id=event.originator_id, status_code=status, error=error, final=final
                    ),
                    tenant_id=event.tenant_id,
                    actor=ACTOR,
                    command_id=f"{NAME}/{notification.id}/{attempt}",
                    at=datetime.now(UTC),
                    tracking=Tracking(NAME, notification.id) if final else None,
                )
            )
            if final:
                if error:
                    log.warning("hand-over %s not delivered: %s", event.originator_id, error)
                return True
            try:
                await asyncio.wait_for(stop.wait(), timeout=self.backoff * 2 ** (attempt - 1))
                return False
            except TimeoutError:
                pass
        return True  # not reached: the last attempt is final
