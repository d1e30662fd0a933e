"""The relay: follows the notification log and publishes every public event to Kafka.

At-least-once: a batch is sent with an idempotent producer (``acks=all``) and its position is
recorded in PostgreSQL only after Kafka acknowledged every message. A crash in between
re-publishes the same events with the same CloudEvent ``id``; consumers de-duplicate on it.
One relay is active at a time: it holds a PostgreSQL advisory lock, and a second one waits.
"""

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import Any

import asyncpg
from aiokafka import AIOKafkaProducer
from eventsourcing.utils import get_topic

from projections.runner import Connection
from services.publication import Publication, to_message
from services.store import EVENTS_TABLE, EventStore, read_log

log = logging.getLogger(__name__)

LOCK_NAME = "feedbackloop-relay"
DDL = """
CREATE TABLE IF NOT EXISTS relay_position (
    name text PRIMARY KEY,
    position bigint NOT NULL
);
INSERT INTO relay_position VALUES ('kafka', 0) ON CONFLICT DO NOTHING;
"""


class Relay:
    def __init__(
        self,
        store: EventStore,
        pool: asyncpg.Pool,
        bootstrap: str,
        publications: Mapping[type, Publication],
        *,
        source: str,
        topic_prefix: str = "",
        batch_size: int = 500,
    ) -> None:
        self.store = store
        self.pool = pool
        self.bootstrap = bootstrap
        self.source = source
        self.topic_prefix = topic_prefix
        self.batch_size = batch_size
        self._by_topic = {get_topic(cls): p for cls, p in publications.items()}
        self._topics = list(self._by_topic)
        self.published = 0

    async def position(self) -> int:
        return int(
            await self.pool.fetchval("SELECT position FROM relay_position WHERE name = 'kafka'")
        )

    async def run(self, stop: asyncio.Event, idle_poll: float = 1.0) -> None:
        """Stand by until this relay holds the lock, then publish until stopped. A lost
        PostgreSQL session loses the lock too: the relay then stands by again."""
        while not stop.is_set():
            try:
                await self._hold_and_publish(stop, idle_poll)
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as error:
                log.warning("relay: lost its PostgreSQL session (%s); standing by again", error)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), timeout=idle_poll)

    async def _hold_and_publish(self, stop: asyncio.Event, idle_poll: float) -> None:
        async with self.pool.acquire() as lock_conn:
            await lock_conn.execute(DDL)
            while not await lock_conn.fetchval(
                "SELECT pg_try_advisory_lock(hashtext($1))", LOCK_NAME
            ):
                log.info("relay: another relay is active; standing by")
                try:
                    await asyncio.wait_for(stop.wait(), timeout=5)
                    return
                except TimeoutError:
                    continue
            log.info("relay: active, publishing to %s", self.bootstrap)
            await self._publish_until(stop, lock_conn, idle_poll)
            await lock_conn.execute("SELECT pg_advisory_unlock(hashtext($1))", LOCK_NAME)

    async def _publish_until(
        self, stop: asyncio.Event, listener: Connection, idle_poll: float
    ) -> None:
        wake = asyncio.Event()

        def on_notify(*_: object) -> None:
            wake.set()

        await listener.add_listener(EVENTS_TABLE, on_notify)
        producer = AIOKafkaProducer(
            bootstrap_servers=self.bootstrap, enable_idempotence=True, acks="all"
        )
        await producer.start()
        try:
            while not stop.is_set():
                wake.clear()
                try:
                    while await self.step(producer, listener):
                        pass
                except Exception as error:  # Kafka or PostgreSQL away: keep the position
                    if listener.is_closed():
                        raise  # the session, and with it the lock, is gone
                    log.warning("relay: %s; will retry", error)
                waiters = [asyncio.create_task(wake.wait()), asyncio.create_task(stop.wait())]
                await asyncio.wait(waiters, timeout=idle_poll, return_when=asyncio.FIRST_COMPLETED)
                for task in waiters:
                    task.cancel()
        finally:
            await producer.stop()
            if not listener.is_closed():
                await listener.remove_listener(EVENTS_TABLE, on_notify)

    async def step(self, producer: AIOKafkaProducer, lock_conn: Connection) -> bool:
        """Publish the next batch; False when there was nothing left to publish."""
        # Read and write the position on the connection holding the lock: if that session
        # is lost (and a standby takes over), this step fails instead of racing it.
        position = int(
            await lock_conn.fetchval("SELECT position FROM relay_position WHERE name = 'kafka'")
        )
        upto, notifications = await asyncio.to_thread(
            read_log, self.store, position, self.batch_size, self._topics
        )
        log.debug(
            "relay step: position %s upto %s (%d notifications)", position, upto, len(notifications)
        )
        if upto <= position:
            return False
        sends: list[Any] = []
        for notification in notifications:
            publication = self._by_topic[notification.topic]
            event = self.store.mapper.to_domain_event(notification)
            message = to_message(publication, event, self.source)
            sends.append(
                await producer.send(
                    self.topic_prefix + publication.topic,
                    value=message.value,
                    key=str(message.key).encode(),
                    headers=[(k, v) for k, v in message.headers.items()],
                )
            )
        await asyncio.gather(*sends)  # every message acknowledged by the broker …
        await lock_conn.execute(  # … before the position moves, and never backwards
            "UPDATE relay_position SET position = $1 WHERE name = 'kafka' AND position < $1",
            upto,
        )
        self.published += len(sends)
        return True
