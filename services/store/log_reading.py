"""Reading the notification log a page at a time: every follower's and every rebuild's way in.

The library's own page query, with rows as tuples (a dict a row is a large share of a
rebuild's time) and results in binary (a state's bytes as stored, not hex to be parsed; uuids
from their sixteen bytes).
"""

from eventsourcing.persistence import Notification
from psycopg.rows import tuple_row

from services.store.event_store import EVENTS_TABLE, EventStore
from services.store.fast_frozen import frozen_from_fields

READ_PAGE = (
    "SELECT notification_id, originator_id, originator_version, topic, state "
    f"FROM {EVENTS_TABLE} WHERE notification_id > %s AND notification_id <= %s "
    "AND topic = ANY(%s) ORDER BY notification_id LIMIT %s"
)


def read_log(
    store: EventStore, after: int, limit: int, topics: list[str], upto: int | None = None
) -> tuple[int, list[Notification]]:
    """The next notifications of the given topics after ``after``, and the position they
    bring a reader to.

    Events commit in notification order (appends take turns, ``APPEND_LOCK``), so
    everything up to the head read first was visible: when the page is not full, the reader
    may move to that head even if none of its topics lay in between. A reader that read the
    head once already (a rebuild) passes a position up to it as ``upto``: the page stops
    there, without reading the head again.
    """
    recorder = store.recorder
    head = upto if upto is not None else recorder.max_notification_id() or 0
    if head <= after:
        return after, []
    datastore = recorder.datastore  # type: ignore[attr-defined]  # PostgreSQL's
    with datastore.get_connection() as conn, conn.cursor(row_factory=tuple_row) as curs:
        curs.execute(READ_PAGE, (after, head, topics, limit), prepare=True, binary=True)
        notifications = [
            frozen_from_fields(
                Notification,
                {"originator_id": aggregate, "originator_version": version, "topic": topic,
                 "state": bytes(state), "id": id}
            )
            for id, aggregate, version, topic, state in curs.fetchall()
        ]  # fmt: skip
    if notifications:
        # Read after an erasure committed, a page is opened without the keys it destroyed, in
        # every process: the erasures are looked at before it is decoded (decisions D221).
        store.data_keys.refresh()
    upto = notifications[-1].id if len(notifications) == limit else head
    return upto, notifications
