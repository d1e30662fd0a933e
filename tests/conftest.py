"""Fixtures: real servers for the session (see tests/servers.py), fresh state for each test."""

import contextlib
import json
import os
import signal
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import httpx
import pytest
from aiokafka.errors import KafkaError
from hypothesis import settings

from services.edge.auth import SCOPES, new_key
from services.processes.bootstrap import Runtime
from services.processes.settings import Settings
from services.store.event_store import EVENTS_TABLE
from tests import servers

# In CI the property tests draw the same examples every run, so a landing is never decided by
# chance; on a developer's machine they keep exploring.
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


def _interrupted(*_: object) -> None:
    raise KeyboardInterrupt  # so a terminated run still tears down the servers it started


signal.signal(signal.SIGTERM, _interrupted)


# Side by side (``make test`` runs pytest-xdist's workers, D300): the controller starts the
# servers once, before the workers start, and hands them over in the environment that the
# workers inherit; each test still gets a database and topics of its own. A run without workers
# (one file, ``-p no:xdist``) starts them in the session fixtures below, as before.
_shared_servers = contextlib.ExitStack()


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER") or not getattr(config.option, "numprocesses", 0):
        return
    os.environ["TEST_DATABASE_URL"] = _shared_servers.enter_context(servers.postgres())
    os.environ["TEST_KAFKA_BOOTSTRAP_SERVERS"] = _shared_servers.enter_context(servers.kafka())


def pytest_unconfigure(config: pytest.Config) -> None:
    _shared_servers.close()


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    with servers.postgres() as url:
        yield url


@pytest.fixture(scope="session")
def kafka_bootstrap() -> Iterator[str]:
    with servers.kafka() as bootstrap:
        yield bootstrap


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


@pytest.fixture
async def database_url(postgres_url: str) -> AsyncIterator[str]:
    """A database of its own for each test: its event store, read models and relay position."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(postgres_url)
    try:
        await admin.execute(f"CREATE DATABASE {name}")
    finally:
        await admin.close()
    yield with_database(postgres_url, name)
    admin = await asyncpg.connect(postgres_url)
    try:
        await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    finally:
        await admin.close()


@dataclass(frozen=True)
class Keys:
    """API keys of the test tenants: writer/reader of tenant A, a key of tenant B, and a
    key of tenant A without any feedback scope; ``a_other`` is a second person of tenant A."""

    a: str
    b: str
    a_read_only: str
    a_no_scope: str
    a_service: str  # a service's key in tenant A, every scope
    entries: str  # JSON, as FEEDBACKLOOP_API_KEYS takes it
    a_other: str = ""  # a second person of tenant A (anna), every scope


@pytest.fixture
def keys() -> Keys:
    tenant_a, tenant_b = f"tenant-a-{uuid.uuid4().hex[:6]}", f"tenant-b-{uuid.uuid4().hex[:6]}"
    a, entry_a = new_key(tenant_a, "alice", list(SCOPES))
    b, entry_b = new_key(tenant_b, "bob", list(SCOPES))
    ro, entry_ro = new_key(tenant_a, "reader", ["factory.feedback.read"])
    none, entry_none = new_key(tenant_a, "nobody", ["factory.evaluation.read"])
    svc, entry_svc = new_key(tenant_a, "svc-nightly", list(SCOPES), service=True)
    other, entry_other = new_key(tenant_a, "anna", list(SCOPES))
    entries = [entry_a, entry_b, entry_ro, entry_none, entry_svc, entry_other]
    return Keys(a, b, ro, none, svc, json.dumps(entries), other)


def settings_for(database_url: str, keys: Keys, kafka: str | None = None) -> Settings:
    return Settings(
        database_url=database_url,
        kafka_bootstrap_servers=kafka,
        api_keys=keys.entries,
        topic_prefix=f"t{uuid.uuid4().hex[:8]}.",
        inbound_group_id=f"inbound-{uuid.uuid4().hex[:8]}",
        read_wait_seconds=20,
    )


@pytest.fixture
async def runtime(database_url: str, keys: Keys) -> AsyncIterator[Runtime]:
    """The service's parts on a fresh database, without Kafka; nothing started yet."""
    rt = await Runtime.open(settings_for(database_url, keys))
    yield rt
    await rt.close()


@pytest.fixture
async def kafka_runtime(
    database_url: str, keys: Keys, kafka_bootstrap: str
) -> AsyncIterator[Runtime]:
    """The same with a real Kafka broker and topics of the test's own (a fresh prefix)."""
    rt = await Runtime.open(settings_for(database_url, keys, kafka_bootstrap))
    yield rt
    await rt.close()
    with contextlib.suppress(KafkaError, OSError):
        await servers.delete_topics(kafka_bootstrap, rt.settings.topic_prefix)


@contextlib.asynccontextmanager
async def client_for(runtime: Runtime, key: str) -> AsyncIterator[httpx.AsyncClient]:
    """The runtime's API in-process, called with ``key``."""
    transport = httpx.ASGITransport(app=runtime.app(), raise_app_exceptions=False)
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(
        transport=transport, base_url="http://test", headers=headers
    ) as http:
        yield http


@pytest.fixture
async def client(runtime: Runtime, keys: Keys) -> AsyncIterator[httpx.AsyncClient]:
    """The API in-process, as tenant A's writer (alice)."""
    async with client_for(runtime, keys.a) as http:
        yield http


async def event_count(runtime: Runtime) -> int:
    """Every event in the store: a refused request must leave it as it was."""
    count = await runtime.pool.fetchval(f"SELECT count(*) FROM {EVENTS_TABLE}")
    assert isinstance(count, int)
    return count


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each test is marked by its folder: unit, integration, e2e, browser or faults."""
    for item in items:
        for speed in ("unit", "integration", "e2e", "browser", "faults"):
            if f"/tests/{speed}/" in str(item.path):
                item.add_marker(getattr(pytest.mark, speed))


# The agent of the seed's wrong-answer report (tests/unit/test_wrong_answer.py SEED_FACTS).
SEED_AGENT = "AgenticOffice/Agent/OfficeCoach"


async def maintain(
    http: httpx.AsyncClient,
    key: str,
    maintainers: tuple[str, ...] = ("alice", "anna", "bob"),
    agent: str = SEED_AGENT,
) -> None:
    """Register ``agent`` in the tenant of ``key`` (its holder a PlatformAdmin, as alice and
    bob are), naming ``maintainers`` (by default the people of ``keys``, tenant A's and B's: a
    name of the other tenant's is no one here): the register is the one source of an agent's
    AssetMaintainers (SPEC C52, decisions D23, D77), so a test that patches, confirms or runs
    its cases, or decides its proposals, registers it first. Saying it again changes nothing."""
    answer = await http.put(
        f"/factory/agents/{agent}",
        json={"maintainers": list(maintainers)},
        headers={"Authorization": f"Bearer {key}"},
    )
    assert answer.status_code == 200, answer.text
