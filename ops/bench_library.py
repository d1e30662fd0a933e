"""The eventsourcing library appending Feedback aggregates straight to the store, no command
bus, no HTTP: the HTTP figures' baseline (``save_timed``) and how the log parts fill the log
(``fill``, not timed)."""

import time
import uuid
from datetime import UTC, datetime
from typing import Any

from bench_feedback import TENANT, body
from bench_sql import append_transactions

from contracts.feedback import RecordFeedback
from services.feedback.domain import Feedback
from services.feedback.handlers import request_digest
from services.store.event_store import EventStore


def aggregate(n: int) -> Feedback:
    command = RecordFeedback.model_validate(body(n))
    return Feedback.record(
        command,
        feedback_id=uuid.uuid4(),
        tenant_id=TENANT,
        given_by="bench",
        given_at=datetime.now(UTC),
        command_id=str(uuid.uuid4()),
        request_digest=request_digest(command),
    )


def save_timed(store: EventStore, url: str, count: int, size: int) -> dict[str, Any]:
    aggregates = [aggregate(n) for n in range(count)]  # built before the clock starts
    transactions = append_transactions(url)
    t0 = time.perf_counter()
    for i in range(0, count, size):
        store.save(*aggregates[i : i + size])
    seconds = time.perf_counter() - t0
    return {
        "events": count,
        "batch_size": size,
        "seconds": round(seconds, 3),
        "events_per_s": round(count / seconds, 1),
        "transactions": append_transactions(url) - transactions,
    }


def fill(store: EventStore, total: int, batch: int = 500) -> float:
    t0 = time.perf_counter()
    for i in range(0, total, batch):
        store.save(*(aggregate(n) for n in range(i, min(total, i + batch))))
    return round(time.perf_counter() - t0, 2)
