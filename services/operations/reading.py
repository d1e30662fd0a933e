"""What an Operator of a tenant sees of the instance (decisions D94): every reader's figures
(instance figures, no tenant's data), the tenant's own parked events in full and everything
else parked as a count, the scheduler's ticks and the tenant's own failing units. The API's
``/factory/operations`` routes and the console's Operations page answer from these."""

import logging
from typing import Any

import asyncpg
from aiokafka.errors import KafkaError

from contracts.errors import Conflict, DomainError, NotFound
from services.followers.parked import Parked, release_of_tenant, tenant_parked
from services.followers.standing import ReaderHealth
from services.kafka.inbound.parking import (
    ParkedMessage,
    message_of_tenant,
    send_again,
    tenant_messages,
)
from services.permissions.rules import ADMIN, OPERATOR
from services.scheduling.standing import SchedulerOrders, instance_standing, scheduler_orders

log = logging.getLogger(__name__)

# Who reads operations (decisions D94): Operators act, a PlatformAdmin and an Observer look
# on. A parked event's content and Retry are an Operator's only.
WATCHERS = (*OPERATOR, *ADMIN, "Observer")
PAGE = 50


def reader_view(r: ReaderHealth) -> dict[str, Any]:
    return {
        "name": r.name,
        "logPosition": r.position,
        "lag": r.lag,
        "parked": r.parked,
        "state": r.state,
        "seenSecondsAgo": None if r.seen_seconds_ago is None else round(r.seen_seconds_ago, 1),
        "problems": r.problems,
        "incidents": r.incidents,
    }


def parked_view(p: Parked) -> dict[str, Any]:
    return {
        "reader": p.reader,
        "logPosition": p.position,
        "topic": p.topic,
        "reason": p.error,
        "attempts": p.attempts,
        "released": p.released,
        "parkedAt": p.parked_at.isoformat(),
        "aggregateId": None if p.originator_id is None else str(p.originator_id),
        "aggregateVersion": p.originator_version,
        "behind": p.behind,
    }


def orders_view(o: SchedulerOrders) -> dict[str, Any]:
    return {
        "tick": None if o.tick is None else o.tick.isoformat(),
        "retrying": o.retrying,
        "givenUp": o.given_up,
        "failing": [
            {
                "job": u.job,
                "unit": u.unit,
                "order": u.order,
                "reason": u.reason,
                "attempts": u.attempts,
                "firstFailedAt": u.first_failed_at.isoformat(),
                "lastFailedAt": u.last_failed_at.isoformat(),
            }
            for u in o.failing
        ],
    }


async def readers(pool: asyncpg.Pool) -> list[dict[str, Any]]:
    """Every reader of the log and the scheduler, as ``feedbackloop status`` lists them."""
    return [reader_view(r) for r in await instance_standing(pool)]


async def parked(
    pool: asyncpg.Pool,
    tenant_id: str,
    operator: bool,
    after: str | None = None,
    limit: int = PAGE,
) -> tuple[dict[str, Any], str | None]:
    """A page of the tenant's parked events (to an Operator; a count to anyone else) and how
    many others are parked; with the key of the next page (``reader/position``)."""
    start = None
    if after is not None:
        reader, _, position = after.rpartition("/")  # a reader's name may hold a '/'
        start = (reader, int(position))
    found = await tenant_parked(pool, tenant_id, start, limit if operator else 0)
    items = [parked_view(p) for p in found.items] if operator else []
    page = {"items": items, "own": found.own, "others": found.others}
    next_key = None if found.after is None else f"{found.after[0]}/{found.after[1]}"
    return page, next_key if operator else None


async def orders(pool: asyncpg.Pool, tenant_id: str) -> dict[str, Any]:
    return orders_view(await scheduler_orders(pool, tenant_id))


async def retry(pool: asyncpg.Pool, tenant_id: str, reader: str, position: int, by: str) -> int:
    """Release the tenant's aggregate parked at ``position``: the same release as
    ``feedbackloop parked retry``; the running reader applies it on its next wake. Logged,
    since a release is no command and so no row of the audit trail (decisions D94)."""
    released = await release_of_tenant(pool, tenant_id, reader, position)
    if released:
        # An operator, not their id: a log line is beyond an erasure's reach (D134).
        log.info(
            "parked: an operator of tenant %s released %d events of %s at position %d",
            tenant_id, released, reader, position,
        )  # fmt: skip
    return released


class NoKafka(DomainError):
    """A parked message cannot be sent again: the service has no broker (answered 503)."""

    code = "kafka-unavailable"


def message_view(m: ParkedMessage) -> dict[str, Any]:
    return {
        "parkedPosition": m.position,
        "topic": m.topic,
        "partition": m.partition,
        "offset": m.offset,
        "reason": m.reason,
        "code": m.code,
        "size": m.payload_size,
        "keptWhole": m.whole,
        "parkedAt": m.parked_at.isoformat(),
    }


async def messages(
    pool: asyncpg.Pool,
    tenant_id: str,
    operator: bool,
    after: str | None = None,
    limit: int = PAGE,
) -> tuple[dict[str, Any], str | None]:
    """A page of the parked inbound messages naming the tenant (to an Operator; a count to
    anyone else) and how many other messages are parked, with the next page's key."""
    found = await tenant_messages(pool, tenant_id, None if after is None else int(after), limit)
    items = [message_view(m) for m in found.items] if operator else []
    page = {"items": items, "own": found.own, "others": found.others}
    return page, None if found.after is None or not operator else str(found.after)


async def retry_message(
    pool: asyncpg.Pool, kafka: str | None, tenant_id: str, position: int, by: str
) -> None:
    """Send the tenant's parked message at ``position`` again to its topic, with the CLI's own
    ``send_again`` (``feedbackloop parked retry inbound --position P``); another tenant's or
    one naming none is not found (decisions D96). Logged, as a release is (D94)."""
    if not await message_of_tenant(pool, tenant_id, position):
        raise NotFound(f"no parked message of yours at position {position}")
    if kafka is None:
        raise NoKafka("this service runs without Kafka: a parked message cannot be sent again")
    try:
        why_not = await send_again(pool, kafka, position)
    except KafkaError as exc:
        raise NoKafka(f"Kafka did not take the message ({type(exc).__name__}): try again") from exc
    if why_not is not None:
        raise Conflict(f"not sent again: {why_not}", position=position)
    log.info("parked: an operator of tenant %s sent message %d again", tenant_id, position)
