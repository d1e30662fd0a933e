"""Apply a page and move the reader's position past it: the one step every reader of the log
takes, the live follower's and a rebuild's alike.

For a transactional reader (a read model) the page's writes and the position are one
transaction, so a redelivered position is skipped; a non-transactional one (the relay, a
webhook) has applied the page already, and its position moves right after. What must wait
behind a parked event is parked in the same transaction.
"""

import logging
from collections.abc import Sequence

from eventsourcing.persistence import Notification

from services.followers.parking import park_event
from services.followers.positions import locked_position, moved_forward, set_position
from services.followers.reader import Connection, Positioned, Reader
from services.observing import metrics

log = logging.getLogger(__name__)


async def apply_and_move(
    conn: Connection,
    reader: Reader,
    batch: Sequence[Positioned],
    upto: int,
    *,
    park_behind: Sequence[Notification] = (),
    parked_error: BaseException | None = None,
    attempts: int = 0,
) -> int:
    """Move ``reader`` to ``upto`` once ``batch`` is applied (by a transactional reader:
    here, in the position's transaction), parking ``park_behind`` on the way. Returns how
    many events of ``batch`` were new to it: none when someone got to ``upto`` first (a
    swap, a former leader's last write)."""
    if not reader.transactional and not park_behind:
        # Nothing to do in the position's transaction but move it: one statement, one round
        # trip instead of five (BEGIN, lock, UPDATE, NOTIFY, COMMIT).
        stored = await moved_forward(conn, reader.name, upto)
        return 0 if stored is None else sum(1 for p in batch if p.position > stored)
    async with conn.transaction():
        stored = await locked_position(conn, reader.name)
        if upto <= stored:
            return 0
        fresh = [p for p in batch if p.position > stored]
        if fresh and reader.transactional:
            await reader.apply(conn, fresh)
        for notification in park_behind:
            reason = await park_event(conn, reader.name, notification, parked_error, attempts)
            log.error(
                "%s: parked position %d (aggregate %s v%d): %s",
                reader.name,
                notification.id,
                notification.originator_id,
                notification.originator_version,
                reason,
            )
            metrics.READER_PARKED_TOTAL.labels(reader.name).inc()
        await set_position(conn, reader.name, upto)
        return len(fresh)
