"""One statement on a PostgreSQL database from the bench's synchronous code, and the append
transactions that wrote the events so far."""

import asyncio
from typing import Any

import asyncpg

from services.store.event_store import EVENTS_TABLE


async def fetchval(url: str, sql: str) -> Any:
    conn = await asyncpg.connect(url)
    try:
        return await conn.fetchval(sql)
    finally:
        await conn.close()


def sql(url: str, statement: str) -> Any:
    return asyncio.run(fetchval(url, statement))


# How many transactions wrote the events so far: the distinct xmin of their rows.
TRANSACTIONS = f"SELECT count(DISTINCT xmin::text) FROM {EVENTS_TABLE}"


def append_transactions(url: str) -> int:
    return int(sql(url, TRANSACTIONS))
