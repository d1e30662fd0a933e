"""The relay: a reader of the log that publishes every public event to Kafka.

At-least-once: a batch is sent with an idempotent producer (``acks=all``) and the follower
moves the position only after Kafka acknowledged every message. A crash in between
re-publishes the same events with the same CloudEvent ``id``; consumers de-duplicate on it.
One relay is active at a time (the follower's leadership). An event that cannot be published
(its message is over the broker's size limit, its payload does not map) is parked by the
follower, not retried forever; a broker that is away is waited for.
"""

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

from aiokafka import AIOKafkaProducer
from eventsourcing.utils import get_topic

from services.follower import Connection, Positioned, is_transient
from services.publication import Publication, to_message
from services.tracing import traceparent_of

log = logging.getLogger(__name__)

NAME = "relay"
# Larger record batches than aiokafka's 16 KB default: a plain producer sending our messages
# went from ~7,000 to ~20,000 messages/s with them (ops/bench_kafka.py, whose baseline uses
# the same settings). No linger: a lone event (the one-by-one retry of a failed page) is not
# held back, and under load the batches fill while the previous request is in flight anyway.
LINGER_MS, MAX_BATCH_BYTES = 0, 512 * 1024


class Relay:
    name = NAME
    transactional = False

    def __init__(
        self,
        bootstrap: str,
        publications: Iterable[Publication],
        *,
        source: str,
        topic_prefix: str = "",
        prepare: Callable[[], Awaitable[None]] | None = None,
        connect_backoff: float = 0.5,
    ) -> None:
        self.bootstrap = bootstrap
        self.source = source
        self.topic_prefix = topic_prefix
        self.prepare = prepare  # e.g. create the topics, once Kafka answers
        self.connect_backoff = connect_backoff
        self._by_topic = {get_topic(p.event): p for p in publications}
        self.topics = list(self._by_topic)
        self._producer: AIOKafkaProducer | None = None
        self.published = 0

    async def open(self, say: Callable[[str], None]) -> None:
        """Connect to Kafka, waiting (with backoff) for as long as it is away."""
        pause = self.connect_backoff
        while True:
            producer = AIOKafkaProducer(
                bootstrap_servers=self.bootstrap,
                enable_idempotence=True,
                acks="all",
                linger_ms=LINGER_MS,
                max_batch_size=MAX_BATCH_BYTES,
            )
            try:
                await producer.start()
                if self.prepare is not None:
                    await self.prepare()
            except BaseException as error:
                await producer.stop()
                if not (isinstance(error, Exception) and is_transient(error)):
                    raise
                say(f"waiting for Kafka at {self.bootstrap}")
                await asyncio.sleep(pause)
                pause = min(pause * 2, 15.0)
                continue
            self._producer = producer
            log.info("relay: publishing to %s", self.bootstrap)
            return

    async def close(self) -> None:
        if self._producer is not None:
            await self._producer.stop()
            self._producer = None

    async def apply(self, conn: Connection, batch: Sequence[Positioned]) -> None:
        producer = self._producer
        assert producer is not None, "the follower opens the relay before applying"
        sends: list[Any] = []
        try:
            for item in batch:
                event = item.event
                publication = self._by_topic[get_topic(type(event))]
                message = to_message(publication, event, self.source)
                headers = list(message.headers.items())
                if (trace := traceparent_of(event)) is not None:
                    headers.append(("traceparent", trace.encode()))
                sends.append(
                    await producer.send(
                        self.topic_prefix + publication.topic,
                        value=message.value,
                        key=str(message.key).encode(),
                        headers=headers,
                    )
                )
        finally:  # every message acknowledged (or failed) before the position may move
            results = await asyncio.gather(*sends, return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        self.published += len(sends)
