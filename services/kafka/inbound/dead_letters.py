"""``<topic>.dlt``: the original value, key and headers, plus why and where from. A dead letter
that cannot be written (too big for the producer or the broker, the broker refusing) is parked
in PostgreSQL instead: never retried forever, and the partition moves on.

At least once: a crash after the dead letter is written and before the offset is committed
writes it again; its ``dlt-original-*`` headers tell a reader it is the same message.
"""

import asyncio
import logging
from typing import Any

import asyncpg
from aiokafka import AIOKafkaProducer

from contracts import topics
from contracts.errors import DomainError
from services.kafka.inbound.parking import park

log = logging.getLogger(__name__)

MAX_REASON_CHARS = 1000


def dead_letter_headers(record: Any, error: DomainError) -> list[tuple[str, bytes]]:
    """The original headers, unchanged, then why and where from."""
    ours = {
        "dlt-error": error.code,
        "dlt-reason": error.message[:MAX_REASON_CHARS],
        "dlt-original-topic": record.topic,
        "dlt-original-partition": str(record.partition),
        "dlt-original-offset": str(record.offset),
    }
    field = error.details.get("field")
    if field:
        ours["dlt-field"] = str(field)[:MAX_REASON_CHARS]
    original = [(k, bytes(v)) for k, v in record.headers or () if k not in ours]
    return original + [(k, v.encode()) for k, v in ours.items()]


class DeadLetters:
    def __init__(self, producer: AIOKafkaProducer, pool: asyncpg.Pool) -> None:
        self._producer = producer
        self._pool = pool

    async def send(self, refused: list[tuple[Any, DomainError]]) -> tuple[int, int]:
        """Write each refused message to its dead-letter topic, or park it; returns when every
        one is settled either way, with how many were written and how many parked."""
        sent = await asyncio.gather(*(self._send(r, e) for r, e in refused))
        parked = 0
        for (record, error), failure in zip(refused, sent, strict=True):
            if failure is None:
                continue
            log.warning(
                "parking %s:%s@%s (%s): not dead-lettered: %s",
                record.topic,
                record.partition,
                record.offset,
                error.message[:200],
                failure,
            )
            await park(self._pool, record, error, f"not dead-lettered: {failure}")
            parked += 1
        return len(refused) - parked, parked

    async def _send(self, record: Any, error: DomainError) -> str | None:
        log.info(
            "dead-lettering %s:%s@%s: %s",
            record.topic,
            record.partition,
            record.offset,
            error.message[:200],
        )
        try:
            delivery = await self._producer.send(
                topics.dead_letter(record.topic),
                value=record.value,
                key=record.key,
                headers=dead_letter_headers(record, error),
            )
            await delivery
        except Exception as failure:  # too big, refused, or the broker away past its timeout
            return f"{type(failure).__name__}: {failure}"[:MAX_REASON_CHARS]
        return None
