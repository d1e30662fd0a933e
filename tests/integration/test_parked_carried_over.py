"""A database parked into by the tables before ``parked`` (``parked_events`` for log events,
``inbound_parked`` for inbound messages) keeps everything parked: at start each row is carried
into ``parked`` once and the old table goes, so an event a reader is already past is still
there to retry (a parked event left behind would never be applied or published again)."""

from uuid import uuid4

import asyncpg
import pytest

from services.followers.parked import list_parked, show_parked
from services.followers.parking import INBOUND
from services.followers.tables import ensure_tables

pytestmark = pytest.mark.integration

BEFORE = """
CREATE TABLE parked_events (
    reader text NOT NULL, position bigint NOT NULL, originator_id uuid NOT NULL,
    originator_version bigint NOT NULL, topic text NOT NULL, error text NOT NULL,
    attempts int NOT NULL, behind bigint, released boolean NOT NULL DEFAULT false,
    parked_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (reader, position));
CREATE TABLE inbound_parked (
    id bigserial PRIMARY KEY, topic text NOT NULL, partition integer NOT NULL,
    "offset" bigint NOT NULL, key bytea, error text NOT NULL, reason text NOT NULL, field text,
    payload_size integer NOT NULL, sha256 text NOT NULL, head bytea NOT NULL,
    headers jsonb NOT NULL, parked_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (topic, partition, "offset", sha256));
"""


async def test_rows_parked_before_are_carried_into_the_one_table(database_url: str) -> None:
    aggregate = uuid4()
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute(BEFORE)
        await conn.execute(
            "INSERT INTO parked_events VALUES ('relay', 7, $1, 1, 'x:Y.Z', 'Boom: no', 3, NULL)",
            aggregate,
        )
        await conn.execute(
            'INSERT INTO inbound_parked (topic, partition, "offset", key, error, reason, '
            "field, payload_size, sha256, head, headers) VALUES ('t.cmd', 2, 41, NULL, "
            "'invalid', 'rating: not a number; no dead letter', 'rating', 3, 'ab', 'abc', '[]')"
        )
        await ensure_tables(conn)
        await ensure_tables(conn)  # idempotent: a second start carries nothing twice
        assert await conn.fetchval("SELECT to_regclass('parked_events')") is None
        assert await conn.fetchval("SELECT to_regclass('inbound_parked')") is None
    finally:
        await conn.close()

    pool = await asyncpg.create_pool(database_url, min_size=1, max_size=2)
    assert pool is not None
    try:
        parked = await list_parked(pool, None)
        assert [(p.reader, p.error) for p in parked if p.reader == "relay"] == [
            ("relay", "Boom: no")
        ]
        messages = [p for p in parked if p.reader == INBOUND]
        assert len(messages) == 1
        shown = await show_parked(pool, INBOUND, messages[0].position)
        assert shown is not None
        assert shown["code"] == "invalid"
        assert shown["field"] == "rating"
        assert shown["error"] == "rating: not a number; no dead letter"
    finally:
        await pool.close()
