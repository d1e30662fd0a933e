"""Readers killed with SIGKILL while commands arrive over HTTP and Kafka lose nothing
and double nothing. Every process is started at once on an empty database, as an operator's
compose file would (the start-up DDL must not race)."""

import asyncio
import random
import uuid
from pathlib import Path

import pytest

from tests.conftest import Keys
from tests.faults.fleet import (
    COMMANDS,
    KILLS,
    READERS,
    SECONDS_BETWEEN_KILLS,
    Fleet,
    Load,
    running_fleet,
)

pytestmark = pytest.mark.timeout(1200)


async def kill_nine(fleet: Fleet, kills: int) -> None:
    """SIGKILL each reader process ``kills`` times, in turn, restarting it at once."""
    for role in [role for _ in range(kills) for role in READERS]:
        await asyncio.sleep(random.uniform(0.5, 1.5) * SECONDS_BETWEEN_KILLS)
        fleet.kill9(role)
        fleet.start(role)


async def test_every_process_started_at_once_on_an_empty_database_comes_up(
    database_url: str, kafka_bootstrap: str, keys: Keys, tmp_path: Path
) -> None:
    prefix = f"f{uuid.uuid4().hex[:6]}."
    with running_fleet(database_url, kafka_bootstrap, keys.entries, tmp_path, prefix) as fleet:
        await fleet.wait_for_api()
        load = Load(fleet.url, keys.a, kafka_bootstrap, prefix, commands=20, seconds=1)
        await load.run()
        await fleet.assert_exactly_once(load)


async def test_readers_killed_with_sigkill_during_load_lose_and_double_nothing(
    database_url: str, kafka_bootstrap: str, keys: Keys, tmp_path: Path
) -> None:
    prefix = f"f{uuid.uuid4().hex[:6]}."
    with running_fleet(database_url, kafka_bootstrap, keys.entries, tmp_path, prefix) as fleet:
        await fleet.wait_for_api()
        seconds = KILLS * len(READERS) * SECONDS_BETWEEN_KILLS
        load = Load(fleet.url, keys.a, kafka_bootstrap, prefix, commands=COMMANDS, seconds=seconds)
        await asyncio.gather(load.run(), kill_nine(fleet, KILLS))

        await fleet.assert_exactly_once(load)
        assert {role: fleet.starts[role] for role in READERS} == dict.fromkeys(READERS, KILLS + 1)
