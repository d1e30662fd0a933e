"""What is on the relay's topics that the event store does not hold: the edge a point-in-time
restore leaves (decisions D49).

A restore brings the store back to an earlier moment; what the relay had published after it
is still on Kafka, but its events are gone from the store. The store then carries on from the
restored head: an aggregate's next event takes the version a lost one had, so it would be
published under the lost one's CloudEvent ``id``, and a subscriber that de-duplicates on ids
would drop it without a word. So the relay looks before it publishes (``Divergence.hold``):

- the last event the relay published, by its position as the store remembers it, gives the
  time from which anything on the topics may be unknown (what was published after the restore
  point was published after that event was stored; events the restored store appends since,
  the scheduler's at start for one, do not move it); every partition is read from the first
  record at or after that time (Kafka's own time index, less a minute for clocks that
  disagree) to its end, past what an operator already acknowledged;
- a record is *held* when the store has the event its ``id`` names (the aggregate in
  ``subject``, one of its versions) with the same ``time``; anything else — an id no stored
  version makes, the same id on another event, a value that is no CloudEvent of ours — is
  *beyond the store*.

While records beyond the store are unacknowledged the relay publishes nothing: it says why in
its state (a readiness problem, ``feedbackloop status``) and logs an error naming what an
operator does: ``feedbackloop restore check`` lists them, ``feedbackloop restore acknowledge``
records them as known (``divergence_acknowledged``) and the relay goes on from its position.
"""

import asyncio
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

import asyncpg
import orjson
from aiokafka import AIOKafkaConsumer, ConsumerRecord, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from eventsourcing.persistence import StoredEvent

from services.followers.positions import read_position
from services.kafka.publication import cloudevent_id
from services.store.event_store import EVENTS_TABLE, EventStore

log = logging.getLogger(__name__)

ACKNOWLEDGED_TABLE = "divergence_acknowledged"
ACKNOWLEDGED_DDL = f"""
CREATE TABLE IF NOT EXISTS {ACKNOWLEDGED_TABLE} (
    topic text NOT NULL,
    partition integer NOT NULL,
    through_offset bigint NOT NULL,
    records integer NOT NULL,
    acknowledged_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (topic, partition)
)"""
# A producer's clock may run behind the store's: read the topics from a little earlier.
CLOCK_SLACK = timedelta(minutes=1)
RECHECK_SECONDS = 5.0  # how often a held relay looks for an operator's acknowledgement
ACTION = "list them: feedbackloop restore check; then: feedbackloop restore acknowledge"


@dataclass(frozen=True)
class Beyond:
    """A record on a topic whose event the store does not hold."""

    topic: str
    partition: int
    offset: int
    id: str
    type: str
    subject: str
    time: str
    tenantid: str
    why: str

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


class Divergence:
    """The relay's look at its topics before it publishes; see the module docstring."""

    def __init__(
        self,
        bootstrap: str,
        topics: Sequence[str],
        store: EventStore,
        pool: asyncpg.Pool,
        *,
        reader: str = "relay",
        recheck: float = RECHECK_SECONDS,
    ) -> None:
        self.bootstrap, self.topics, self.reader = bootstrap, list(topics), reader
        self.store, self.pool, self.recheck = store, pool, recheck

    async def hold(self, say: Callable[[str], None]) -> None:
        """Return once nothing unacknowledged lies beyond the store; until then say so, loudly,
        and look again every ``recheck`` seconds."""
        told = -1
        while beyond := await self.beyond():
            if len(beyond) != told:
                told = len(beyond)
                first = beyond[0]
                log.error(
                    "relay: %d records on Kafka hold events the store does not (restored to an "
                    "earlier point?), first %s[%d]@%d id %s (%s); publishing nothing until an "
                    "operator acknowledges them: %s",
                    told,
                    first.topic,
                    first.partition,
                    first.offset,
                    first.id,
                    first.why,
                    ACTION,
                )
            say(f"diverged: {told} records on Kafka beyond the store; {ACTION}")
            await asyncio.sleep(self.recheck)

    async def beyond(self) -> list[Beyond]:
        """The unacknowledged records on the topics whose events the store does not hold."""
        await self.pool.execute(ACKNOWLEDGED_DDL)
        position = await read_position(self.pool, self.reader)
        published = await self.pool.fetchval(
            f"SELECT max(notification_id) FROM {EVENTS_TABLE} WHERE notification_id <= $1",
            position,
        )
        since = await asyncio.to_thread(event_time, self.store, published)
        acknowledged = {
            (row["topic"], row["partition"]): row["through_offset"]
            for row in await self.pool.fetch(f"SELECT * FROM {ACKNOWLEDGED_TABLE}")
        }
        records = await read_since(self.bootstrap, self.topics, since, acknowledged)
        return await not_held(self.store, self.pool, records)

    async def acknowledge(self, beyond: Iterable[Beyond]) -> int:
        """Record these records as known to an operator; the relay goes on past them."""
        through: dict[tuple[str, int], tuple[int, int]] = {}
        for record in beyond:
            offset, count = through.get((record.topic, record.partition), (-1, 0))
            through[record.topic, record.partition] = (max(offset, record.offset), count + 1)
        await self.pool.execute(ACKNOWLEDGED_DDL)
        await self.pool.executemany(
            f"INSERT INTO {ACKNOWLEDGED_TABLE} (topic, partition, through_offset, records) "
            "VALUES ($1, $2, $3, $4) ON CONFLICT (topic, partition) DO UPDATE SET "
            "through_offset = greatest(EXCLUDED.through_offset, "
            f"{ACKNOWLEDGED_TABLE}.through_offset), "
            f"records = {ACKNOWLEDGED_TABLE}.records + EXCLUDED.records, acknowledged_at = now()",
            [(t, p, offset, count) for (t, p), (offset, count) in through.items()],
        )
        return sum(count for _, count in through.values())


def event_time(store: EventStore, position: int | None) -> datetime | None:
    """The timestamp of the event at ``position`` (None: no position, nothing published)."""
    if not position:
        return None
    (last,) = store.recorder.select_notifications(start=position, limit=1)
    event: Any = store.mapper.to_domain_event(last)
    timestamp: datetime = event.timestamp
    return timestamp


async def read_since(
    bootstrap: str,
    topics: Sequence[str],
    since: datetime | None,
    acknowledged: dict[tuple[str, int], int],
) -> list[ConsumerRecord[bytes, bytes]]:
    """Every record of the topics published at or after ``since`` (all of them when None),
    past the acknowledged offsets, read to each partition's end as it is now."""
    partitions = await partitions_of(bootstrap, topics)
    if not partitions:
        return []
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        ends = await consumer.end_offsets(partitions)
        if since is None:
            starts = await consumer.beginning_offsets(partitions)
        else:
            at = int((since - CLOCK_SLACK).timestamp() * 1000)
            found = await consumer.offsets_for_times({tp: at for tp in partitions})
            starts = {tp: ends[tp] if hit is None else hit.offset for tp, hit in found.items()}
        for tp in partitions:
            starts[tp] = max(starts[tp], acknowledged.get((tp.topic, tp.partition), -1) + 1)
        reading = [tp for tp in partitions if starts[tp] < ends[tp]]
        if not reading:
            return []
        consumer.assign(reading)
        for tp in reading:
            consumer.seek(tp, starts[tp])
        records: list[ConsumerRecord[bytes, bytes]] = []
        while reading:
            batches = await consumer.getmany(*reading, timeout_ms=1000)
            for batch in batches.values():
                records.extend(
                    r for r in batch if r.offset < ends[TopicPartition(r.topic, r.partition)]
                )
            reading = [tp for tp in reading if await consumer.position(tp) < ends[tp]]
        return records
    finally:
        await consumer.stop()


async def partitions_of(bootstrap: str, topics: Sequence[str]) -> list[TopicPartition]:
    """The topics' partitions, as the broker's metadata lists them (a topic not there: none)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        described = await admin.describe_topics(list(topics))
    finally:
        await admin.close()
    return [
        TopicPartition(topic["topic"], partition["partition"])
        for topic in described
        if topic["error_code"] == 0
        for partition in sorted(topic["partitions"], key=lambda p: int(p["partition"]))
    ]


async def not_held(
    store: EventStore, pool: asyncpg.Pool, records: Sequence[ConsumerRecord[bytes, bytes]]
) -> list[Beyond]:
    """The records whose events the store does not hold (module docstring). The stored events
    of the records' aggregates are read in one query; only those whose id a record names are
    decoded, for their time."""
    read: list[tuple[ConsumerRecord[bytes, bytes], dict[str, Any]]] = []
    beyond = []
    for record in records:
        try:
            value = orjson.loads(record.value or b"")
            UUID(str(value["subject"])), str(value["id"])
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            beyond.append(beyond_record(record, {}, "not a CloudEvent of ours"))
            continue
        read.append((record, value))
    subjects = sorted({UUID(str(value["subject"])) for _, value in read})
    rows = await pool.fetch(
        "SELECT originator_id, originator_version, topic, state "
        f"FROM {EVENTS_TABLE} WHERE originator_id = ANY($1::uuid[])",
        subjects,
    )
    stored = {  # CloudEvent id -> the stored event it names
        cloudevent_id(row["originator_id"], row["originator_version"]): StoredEvent(
            row["originator_id"], row["originator_version"], row["topic"], bytes(row["state"])
        )
        for row in rows
    }
    for record, value in read:
        event = stored.get(str(value["id"]))
        if event is None:
            beyond.append(beyond_record(record, value, "no stored event has this id"))
        elif stored_time(store, event) != parse_time(value.get("time")):
            beyond.append(beyond_record(record, value, "the stored event of this id is another"))
    return sorted(beyond, key=lambda b: (b.topic, b.partition, b.offset))


def stored_time(store: EventStore, stored: Any) -> datetime:
    event: Any = store.mapper.to_domain_event(stored)
    timestamp: datetime = event.timestamp
    return timestamp


def parse_time(text: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None


def beyond_record(record: ConsumerRecord[bytes, bytes], value: dict[str, Any], why: str) -> Beyond:
    return Beyond(
        record.topic,
        record.partition,
        record.offset,
        str(value.get("id", "")),
        str(value.get("type", "")),
        str(value.get("subject", "")),
        str(value.get("time", "")),
        str(value.get("tenantid", "")),
        why,
    )
