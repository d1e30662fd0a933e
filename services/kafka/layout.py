"""One layout of the relay publishes at a time, and a new layout starts where the old one
left off (decisions D273, D274).

A *layout* is the number of shares the relay runs in (``services.kafka.shares``): 1/1 is one
layout, 1/2 + 2/2 another. Two layouts live at once would publish every event twice (each
share of each layout publishes its part of everything), so the leader of a share holds a
*shared* advisory lock ``(LAYOUTS, N)`` on its leadership connection while it leads, and
publishes only once no lock of another N is held in this database. The leaders of one layout
share theirs; a layout that finds another waits, says so in its state (a readiness problem,
``feedbackloop status``) and looks again. Taken first and looked at second, two layouts
starting at once both see each other and both wait; the pauses are jittered, so one of them
soon gets there first. A lock dies with its session: a leader killed with -9 frees it at once.

Under that lock a share carries the other layouts over, in one transaction: every reader of
the new layout without a position yet (or still at 0) starts at the *lowest* position of the
old layout's readers, so nothing the old layout had not published is lost; what one of its
shares had published beyond that is published again, under the same CloudEvent ``id``,
which consumers de-duplicate on. The old readers' parked events pass to the share of the new
layout their aggregate falls in (an aggregate's later events keep waiting behind them), and
the old readers' positions and heartbeats are forgotten, so ``feedbackloop status`` lists
only the layout that runs.
"""

import asyncio
import contextlib
import logging
import random
from collections.abc import AsyncIterator, Callable

from services.followers.reader import Connection
from services.followers.transient import connected
from services.kafka.murmur2 import murmur2_each
from services.kafka.publication import key_of
from services.kafka.shares import Share

log = logging.getLogger(__name__)

LAYOUTS = 0x52454C41  # the first key of the layouts' locks, (LAYOUTS, N): "RELA"
RECHECK_SECONDS = 5.0  # how often a waiting layout looks again (jittered)
RELAY_READERS = r"^relay(-[0-9]+of[0-9]+)?$"  # the readers of every layout
ACTION = "stop every relay of the other layout first (docs/kafka.md: The relay in shares)"

OTHER_LAYOUT = """
SELECT min(l.objid::text::bigint) FROM pg_locks l JOIN pg_database d ON d.oid = l.database
WHERE l.locktype = 'advisory' AND l.objsubid = 2 AND l.granted
  AND l.classid = $1::bigint::oid AND l.objid <> $2::bigint::oid
  AND d.datname = current_database()
"""


async def other_layout(conn: Connection, share: Share) -> int | None:
    """The share count of another layout whose leader publishes now, if any."""
    found = await conn.fetchval(OTHER_LAYOUT, LAYOUTS, share.count)
    return None if found is None else int(found)


@contextlib.asynccontextmanager
async def holding_layout(
    conn: Connection,
    share: Share,
    say: Callable[[str], None],
    *,
    recheck: float = RECHECK_SECONDS,
) -> AsyncIterator[None]:
    """Hold the layout's lock on the leader's ``conn`` for the block, once no other layout
    publishes (waiting until then, saying why), with the old layout carried over."""
    told = None
    while True:
        await conn.execute("SELECT pg_advisory_lock_shared($1, $2)", LAYOUTS, share.count)
        other = await other_layout(conn, share)
        if other is None:
            break
        await conn.execute("SELECT pg_advisory_unlock_shared($1, $2)", LAYOUTS, share.count)
        if other != told:
            told = other
            log.error(
                "relay %s: a relay in %d shares publishes; publishing nothing while it does: %s",
                share, other, ACTION,
            )  # fmt: skip
        say(f"waiting: a relay in {other} shares publishes; {ACTION}")
        await asyncio.sleep(recheck * random.uniform(0.5, 1.5))
    try:
        await carry_over(conn, share)
        yield
    finally:
        if connected(conn):
            await conn.execute("SELECT pg_advisory_unlock_shared($1, $2)", LAYOUTS, share.count)


async def carry_over(conn: Connection, share: Share) -> None:
    """The other layouts' positions and parked events taken over by ``share``'s layout, in
    one transaction (the module docstring); nothing to do when only this layout has run."""
    names = share.names()
    async with conn.transaction():
        # Two shares of the new layout carry over one after the other, the second finding
        # nothing left to do.
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext('feedbackloop-relay-layout'))")
        old = await conn.fetch(
            "SELECT reader, position FROM reader_positions "
            "WHERE reader ~ $1 AND NOT reader = ANY($2::text[])",
            RELAY_READERS, names,
        )  # fmt: skip
        if not old:
            return
        start = min(int(row["position"]) for row in old)
        olds = [row["reader"] for row in old]
        await conn.executemany(
            "INSERT INTO reader_positions (reader, position) VALUES ($1, $2) "
            "ON CONFLICT (reader) DO UPDATE SET position = EXCLUDED.position "
            "WHERE reader_positions.position = 0",
            [(name, start) for name in names],
        )
        parked = await conn.fetch(
            "SELECT reader, position, originator_id FROM parked WHERE reader = ANY($1::text[]) "
            "AND originator_id IS NOT NULL",
            olds,
        )
        hashes = murmur2_each([key_of(row["originator_id"]) for row in parked])
        await conn.executemany(
            "UPDATE parked SET reader = $3 WHERE reader = $1 AND position = $2 AND NOT EXISTS "
            "(SELECT 1 FROM parked p WHERE p.reader = $3 AND p.position = $2)",
            [
                (row["reader"], row["position"], names[share.of_hash(hashed) - 1])
                for row, hashed in zip(parked, hashes, strict=True)
            ],
        )
        await conn.execute("DELETE FROM reader_positions WHERE reader = ANY($1::text[])", olds)
        await conn.execute("DELETE FROM heartbeats WHERE reader = ANY($1::text[])", olds)
    log.warning(
        "relay %s: took over from %s at position %d (%d parked events carried over); what "
        "they had published beyond it is published again, under the same ids",
        share, ", ".join(olds), start, len(parked),
    )  # fmt: skip
