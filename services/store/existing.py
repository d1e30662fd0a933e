"""Which aggregates exist: the bus asks it of a batch's created ids in one query, so that a
handler need not look each one up (``Issued.new``)."""

from collections.abc import Collection
from uuid import UUID

from psycopg.rows import tuple_row

from services.store.event_store import EVENTS_TABLE, EventStore


def existing_query(ids: str) -> str:
    """Which of the ids in the array parameter ``ids`` (``%b`` for psycopg, ``$1`` for
    asyncpg) have events: one probe of the primary key per id.

    ``originator_id = ANY(...)`` may be planned as a (parallel) scan of the whole table while
    the store has no statistics yet (a fresh store, or one growing faster than autovacuum
    analyses it), a cost growing with the log. The lateral ``LIMIT 1`` leaves the planner one
    way, an index probe per id, with or without statistics."""
    return (
        f"SELECT wanted.id FROM unnest({ids}::uuid[]) AS wanted(id) CROSS JOIN LATERAL "
        f"(SELECT FROM {EVENTS_TABLE} WHERE originator_id = wanted.id LIMIT 1) AS found"
    )


EXISTING = existing_query("%b")
EXISTING_ON_LOOP = existing_query("$1")  # asyncpg's


def existing(store: EventStore, ids: Collection[UUID]) -> set[UUID]:
    """Which of these aggregates have events, in one query."""
    if not ids:
        return set()
    datastore = store.recorder.datastore  # type: ignore[attr-defined]  # PostgreSQL's
    with datastore.get_connection() as conn, conn.cursor(row_factory=tuple_row) as curs:
        # Binary (%b): a text array of hundreds of ids is quoted element by element.
        curs.execute(EXISTING, [list(set(ids))])
        return {id for (id,) in curs.fetchall()}
