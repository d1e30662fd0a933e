"""The triage intake of the weekly digest: a reader of the log that takes each agent's weekly
post (``Digest.AgentPosted``, published as ``digest-posted``) into the agent's standing issue
(SPEC W129–W134, W136, W138).

For each post not taken in yet (its ``TriageItem`` does not exist):

- the first ``issueUrl`` among the previous twelve weeks' items is carried (W131): the items
  are loaded by the ids the post spells out (``previousItems``, nearest week first), never
  searched (W130);
- carried → the week's numbers are commented on that issue (W132);
- none → one issue is filed, titled ``Wrong answers — <agent>`` and labelled ``feedback`` and
  ``wrong-answer-digest`` (W133), in the repository the agent register names for the agent
  (W134); no repository, or no tracker for the tenant → the item is ``Unrouted`` with the
  finding, never filed in a guessed or fleet-wide repository;
- what was done is recorded (``RecordTriage``) as the service.

Exactly once: the item's existence is the reader's own memory (a restart or a replay from
position 0 meets taken items and skips them), and the tracker's calls are keyed by the item
(``tracker``), so a crash between the tracker's answer and the record finds, on the retry,
what was made (decisions D65). A tracker that is down delays the intake: its call is retried
with growing pauses (tenacity), the reader's status saying so, and nothing moves past the
item meanwhile (decisions D66).
"""

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.utils import get_topic
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, wait_exponential

from contracts.digests import STANDING_ISSUE_LABELS, STANDING_ISSUE_TITLE
from contracts.intake import RecordTriage
from services.bus.command_bus import CommandBus
from services.bus.issued import Issued
from services.digests.domain import Digest
from services.digests.tracker import transient
from services.digests.triage import TriageItem, triage_id
from services.followers.reader import Connection, Positioned
from services.permissions.agent_register import registration
from services.store.event_store import EventStore

log = logging.getLogger(__name__)

NAME = "triage-intake"
NO_REPOSITORY = "the agent register names no repository for {agent!r}: nothing filed (W134)"
NO_TRACKER = "no tracker is configured for this tenant: nothing filed"


class Tracker(Protocol):
    async def file_issue(
        self, repository: str, title: str, labels: Sequence[str], body: str, key: str
    ) -> str: ...

    async def comment(self, issue_url: str, body: str, key: str) -> str: ...


def issue_body(event: Any) -> str:
    return (
        f"The weekly digest of wrong answers of `{event.agent}`, filed by the feedback loop. "
        f"Each following week's numbers are added here as a comment.\n\n"
        f"## {event.week}\n\n{event.message}\n\n{event.url}"
    )


def comment_body(event: Any) -> str:
    return f"## {event.week}\n\n{event.message}\n\n{event.url}"


class TriageIntake:
    """The reader; ``trackers``: each tenant's tracker (a tenant without one is unrouted)."""

    transactional = False
    name = NAME
    page_size = 20  # each post may wait on the tracker: small pages keep the status fresh

    def __init__(
        self,
        store: EventStore,
        bus: CommandBus,
        trackers: Mapping[str, Tracker],
        *,
        backoff_seconds: float = 1.0,
        max_backoff_seconds: float = 300.0,
    ) -> None:
        self.store, self.bus, self.trackers = store, bus, trackers
        self.backoff, self.max_backoff = backoff_seconds, max_backoff_seconds
        self.topics = [get_topic(Digest.AgentPosted)]
        self.say: Callable[[str], None] = lambda _: None

    async def open(self, say: Callable[[str], None]) -> None:
        self.say = say

    async def close(self) -> None:
        pass

    async def apply(self, conn: Connection, batch: Sequence[Positioned]) -> None:
        for item in batch:
            await self.take_in(item.event)

    async def take_in(self, event: Any) -> None:
        if await self._item(event.tenant_id, event.item_id) is not None:
            return  # taken in already: a replay, a restart, another leader before
        carried = await self._carried(event)
        tracker = self.trackers.get(event.tenant_id)
        found = await asyncio.to_thread(registration, self.store, event.tenant_id, event.agent)
        repository = found.repository if found is not None else None
        said: dict[str, Any] = {
            "item_id": event.item_id, "week": event.week, "agent": event.agent,
            "agent_id": event.agent_id, "repository": repository,
        }  # fmt: skip
        if tracker is None:
            command = RecordTriage(**said, outcome="unrouted", finding=NO_TRACKER)
        elif carried is not None:
            made = await self._retried(
                lambda: tracker.comment(carried, comment_body(event), event.item_id)
            )
            command = RecordTriage(**said, outcome="commented", issue_url=carried, comment_url=made)
        elif repository is None:
            finding = NO_REPOSITORY.format(agent=event.agent)
            command = RecordTriage(**said, outcome="unrouted", finding=finding)
        else:
            title = STANDING_ISSUE_TITLE.format(agent=event.agent)
            labels = list(STANDING_ISSUE_LABELS)
            body = issue_body(event)
            filed = await self._retried(
                lambda: tracker.file_issue(repository, title, labels, body, event.item_id)
            )
            command = RecordTriage(**said, outcome="filed", issue_url=filed)
        await self.bus.execute(
            Issued(
                command,
                tenant_id=event.tenant_id,
                actor=f"system:{NAME}",
                command_id=f"{NAME}/{event.item_id}",
                at=datetime.now(UTC),
                service=True,
            )
        )

    async def _carried(self, event: Any) -> str | None:
        """W131: the first ``issueUrl`` among the previous items, nearest week first."""
        for previous in event.previous_items:
            found = await self._item(event.tenant_id, previous)
            if found is not None and found.issue_url:
                return str(found.issue_url)
        return None

    async def _item(self, tenant_id: str, item_id: str) -> TriageItem | None:
        try:
            found: TriageItem = await asyncio.to_thread(
                self.store.repository.get, triage_id(tenant_id, item_id)
            )
        except AggregateNotFoundError:
            return None
        return found

    async def _retried(self, call: Callable[[], Awaitable[str]]) -> str:
        """The tracker's call until it answers: what may pass later (network, 5xx, rate
        limits) is retried with growing pauses, said in the reader's status; a refusal for
        good is raised (the follower parks the post with it)."""

        def waiting(state: RetryCallState) -> None:
            error = state.outcome.exception() if state.outcome else None
            pause = state.upcoming_sleep
            self.say(f"tracker unavailable ({type(error).__name__}); retrying in {pause:.0f} s")
            log.warning("%s: tracker unavailable: %s; retrying in %.1f s", NAME, error, pause)

        retrying = AsyncRetrying(
            retry=retry_if_exception(transient),
            wait=wait_exponential(multiplier=self.backoff, max=self.max_backoff),
            before_sleep=waiting,
            reraise=True,
        )

        async def attempt() -> str:
            return await call()

        answer: str = await retrying(attempt)
        self.say("following")
        return answer
