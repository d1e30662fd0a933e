"""The relay: a reader of the log that publishes every public event to Kafka.

At-least-once: a batch is sent with an idempotent producer (``acks=all``) and the follower
moves the position only after Kafka acknowledged every message. A crash in between
re-publishes the same events with the same CloudEvent ``id``; consumers de-duplicate on it.

The relay is a *pipelined* reader (``services.followers.follower.Pipelined``): ``send`` hands
a page's messages to the producer and returns the acknowledgement still to come, so the
follower builds and hands over the next page while Kafka acknowledges this one; the position
still moves past a page only once it and every page before it were acknowledged. A page
holding an aggregate whose events in the page before are unacknowledged waits for that page to
settle: if that page fails (published again one by one, parked where it keeps failing),
nothing of the aggregate has gone out behind it, so each aggregate's events reach its
partition in order. Pages are of ``page_size`` events, larger than the follower's default: see
there. Building a page gives the event loop a turn now and then (``TURN_EVERY``), so the
producer keeps sending the page before and reading its acknowledgements meanwhile.
Before it publishes anything, an opened relay looks for records on its topics whose events the
store does not hold — what a point-in-time restore leaves behind — and publishes nothing while
there are unacknowledged ones (``services.kafka.divergence``, decisions D49).
One relay is active at a time (the follower's leadership) — or, in shares, one per share, each
publishing the events of its share of the aggregates (``services.kafka.shares``), one layout
of shares at a time (``services.kafka.layout``). An event that cannot be published
(its message is over the broker's size limit, its payload does not map) is parked by the
follower, not retried forever; a broker that is away is waited for.

A batch goes out as aiokafka record batches, one per topic partition (``send_batch``), not a
``send()`` per message: the relay picks each message's partition as aiokafka's own
``DefaultPartitioner`` does (murmur2 of the key, the Java client's hash; computed for the whole
page at once by ``services.kafka.murmur2``), so one aggregate's events land in the partition
they always did, in order. The producer's idempotence covers these batches as it covers its
own: it stamps producer id, epoch and sequence numbers on every batch it drains
(``MessageAccumulator._pop_batch``), whoever filled it. With tracing on, OpenTelemetry's
aiokafka instrumentation wraps ``send()`` only, so it opens no producer span per message; the
event's own ``traceparent`` travels with it (header and CloudEvent attribute).
"""

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

from aiokafka import AIOKafkaProducer
from aiokafka.errors import MessageSizeTooLargeError
from aiokafka.producer.message_accumulator import BatchBuilder
from aiokafka.record.default_records import DefaultRecordBatchBuilder
from eventsourcing.utils import get_topic
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, wait_exponential

from services.followers.reader import Connection, Positioned
from services.followers.transient import is_transient
from services.kafka.divergence import Divergence
from services.kafka.layout import holding_layout
from services.kafka.murmur2 import murmur2_each
from services.kafka.partitioner import partition_of
from services.kafka.publication import CONTENT_TYPE, Publication, key_of, structured_cloudevent
from services.kafka.shares import NAME, WHOLE, Share
from services.observing.tracing import traceparent_of

__all__ = ["NAME", "Relay"]

log = logging.getLogger(__name__)

# Larger record batches than aiokafka's 16 KB default: a plain producer sends our messages about
# three times as fast with them (ops/bench_relay.py, whose baseline uses the same settings).
# No linger: a lone event (the one-by-one retry of a failed page) is not
# held back, and under load the batches fill while the previous request is in flight anyway.
LINGER_MS, MAX_BATCH_BYTES = 0, 512 * 1024
# aiokafka's default, named so the relay refuses what ``send()`` refused: a message larger than
# this is the event's own problem (parked), never a batch the broker turns away.
MAX_REQUEST_BYTES = 1024 * 1024
HEADER = ("content-type", CONTENT_TYPE.encode())
# More than aiokafka's estimate adds to a message's key and value: its batch header and record
# overhead (under 100 bytes), the varint lengths, two headers of ours (content-type and a
# validated traceparent, under 150 bytes).
HEADROOM = 1024
MAX_CONNECT_PAUSE = 15.0  # seconds between two tries to reach Kafka, at most
# Messages built between two turns of the event loop while a page is filled (decisions D322).
TURN_EVERY = 250


def transient(error: BaseException) -> bool:
    """Kafka (or PostgreSQL, which ``prepare`` may need) away for now: wait and try again. A
    cancellation is no failure to retry."""
    return isinstance(error, Exception) and is_transient(error)


class Relay:
    transactional = False
    # Pages of 5,000 events rather than the follower's 500 (decisions D320): a page's fixed
    # costs (the position's durable commit, the parked query, reading the log) are waits the
    # relay's one core sits out, and they stay a small part of its time; larger pages hold
    # more decoded events at once (peak RSS) and take longer to fill before the first send.
    page_size = 5000

    def __init__(
        self,
        bootstrap: str,
        publications: Iterable[Publication],
        *,
        source: str,
        topic_prefix: str = "",
        prepare: Callable[[], Awaitable[None]] | None = None,
        connect_backoff: float = 0.5,
        divergence: Divergence | None = None,
        share: Share = WHOLE,
    ) -> None:
        self.share = share
        self.name = share.name  # "relay" for the whole log, as always (decisions D271)
        # A share reads only its aggregates' events of each page (D272); the whole log, all.
        self.select = None if share.whole else share.select
        self.bootstrap = bootstrap
        self.source = source
        self.topic_prefix = topic_prefix
        self.prepare = prepare  # e.g. create the topics, once Kafka answers
        self.connect_backoff = connect_backoff
        self.divergence = divergence  # None: the topics are not compared with the store
        # Per event class, once: its publication and the Kafka topic it goes to.
        self._routes = {p.event: (p, topic_prefix + p.topic) for p in publications}
        self.topics = [get_topic(event) for event in self._routes]
        self._producer: AIOKafkaProducer | None = None
        self.published = 0

    def holding(
        self, conn: Connection, say: Callable[[str], None]
    ) -> contextlib.AbstractAsyncContextManager[None]:
        """The layout's lock while it leads: one layout publishes at a time (D273, D274)."""
        return holding_layout(conn, self.share, say)

    async def open(self, say: Callable[[str], None]) -> None:
        """Connect to Kafka, waiting (with a backoff that doubles up to ``MAX_CONNECT_PAUSE``)
        for as long as it is away; any other failure is raised."""

        def waiting(state: RetryCallState) -> None:
            say(f"waiting for Kafka at {self.bootstrap}")

        retrying = AsyncRetrying(
            retry=retry_if_exception(transient),
            wait=wait_exponential(multiplier=self.connect_backoff, max=MAX_CONNECT_PAUSE),
            before_sleep=waiting,
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                self._producer = await self._connect()
        if self.divergence is not None:
            try:
                await self.divergence.hold(say)
            except BaseException:
                await self.close()
                raise
        log.info("%s: publishing to %s (share %s)", self.name, self.bootstrap, self.share)

    async def _connect(self) -> AIOKafkaProducer:
        producer = AIOKafkaProducer(
            bootstrap_servers=self.bootstrap,
            enable_idempotence=True,
            acks="all",
            linger_ms=LINGER_MS,
            max_batch_size=MAX_BATCH_BYTES,
            max_request_size=MAX_REQUEST_BYTES,
        )
        try:
            await producer.start()
            if self.prepare is not None:
                await self.prepare()
        except BaseException:
            await producer.stop()
            raise
        return producer

    async def close(self) -> None:
        if self._producer is not None:
            await self._producer.stop()
            self._producer = None

    async def apply(self, conn: Connection, batch: Sequence[Positioned]) -> None:
        await (await self.send(batch))

    async def send(self, batch: Sequence[Positioned]) -> "asyncio.Future[None]":
        """Hand the batch's messages to the producer; the future is done once Kafka has
        acknowledged every one of them (or failed with the first failure). The follower builds
        and hands over its next page while this one's acknowledgements are on their way."""
        producer = self._producer
        assert producer is not None, "the follower opens the relay before applying"
        batches = await self._fill(producer, batch)
        sends: list[asyncio.Future[Any]] = []
        try:
            for (topic, partition), builders in batches.items():
                for builder in builders:  # in order: a partition's batches queue one behind another
                    sends.append(await producer.send_batch(builder, topic, partition=partition))
        except BaseException:  # settled before the follower goes on (one by one, or standby)
            await asyncio.gather(*sends, return_exceptions=True)
            raise
        acknowledged = asyncio.ensure_future(self._acknowledged(sends, len(batch)))
        acknowledged.add_done_callback(lambda done: done.cancelled() or done.exception())
        return acknowledged

    async def _acknowledged(self, sends: list["asyncio.Future[Any]"], count: int) -> None:
        """Every message acknowledged (or failed) before the position may move."""
        results = await asyncio.gather(*sends, return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        self.published += count

    async def _fill(
        self, producer: AIOKafkaProducer, batch: Sequence[Positioned]
    ) -> dict[tuple[str, int], list[BatchBuilder]]:
        """The batch's messages in record batches per (topic, partition), in log order."""
        partitions: dict[str, list[int]] = {}
        batches: dict[tuple[str, int], list[BatchBuilder]] = {}
        keys = [key_of(item.event.originator_id) for item in batch]
        # The page's keys hashed at once (services.kafka.murmur2); each value is built and
        # appended in one go, never held for the page: a page of orjson's outputs kept alive
        # costs the allocator more than writing them did.
        for n, (item, key, hashed) in enumerate(zip(batch, keys, murmur2_each(keys), strict=True)):
            if n % TURN_EVERY == TURN_EVERY - 1:
                await asyncio.sleep(0)  # the loop's turn: see TURN_EVERY
            event = item.event
            publication, topic = self._routes[type(event)]
            if (choices := partitions.get(topic)) is None:
                choices = partitions[topic] = sorted(await producer.partitions_for(topic))
            value = structured_cloudevent(publication, event, self.source, key.decode())
            headers = [HEADER]  # a list: aiokafka's record builder takes nothing else
            if (trace := traceparent_of(event)) is not None:
                headers.append(("traceparent", trace.encode()))
            refuse_too_large(key, value, headers)
            builders = batches.setdefault((topic, partition_of(hashed, choices)), [])
            if not builders or not append(builders[-1], key, value, headers):
                builders.append(producer.create_batch())  # full: the next one queues behind it
                if not append(builders[-1], key, value, headers):
                    raise RuntimeError("an empty record batch refused a message")
        return batches


def append(builder: BatchBuilder, key: bytes, value: bytes, headers: list[Any]) -> bool:
    """Whether the record batch took the message (False: it is full). No timestamp: the
    builder stamps the time of the append, as ``send()`` does."""
    return builder.append(timestamp=None, key=key, value=value, headers=headers) is not None


def refuse_too_large(key: bytes, value: bytes, headers: list[Any]) -> None:
    """What ``send()`` checks before it accepts a message; an empty record batch would take
    it and the broker refuse the whole batch."""
    if len(headers) <= 2 and len(key) + len(value) + HEADROOM <= MAX_REQUEST_BYTES:
        return  # far below the limit, whatever aiokafka's estimate adds: no estimate needed
    size = DefaultRecordBatchBuilder.estimate_size_in_bytes(key, value, headers)
    if size > MAX_REQUEST_BYTES:
        raise MessageSizeTooLargeError(
            f"The message is {size} bytes when serialized, more than the {MAX_REQUEST_BYTES} "
            "bytes a request may carry"
        )
