"""The configured keys the access and audit tests start from, and the runtime they run:
a PlatformAdmin of each of two tenants and a person of the first with no role."""

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from services.edge.auth import SCOPES, ApiKeyEntry, hash_key
from services.processes.bootstrap import Runtime
from tests.conftest import settings_for


@dataclass(frozen=True)
class Admins:
    """Configured keys: a PlatformAdmin of tenants A and B, and a person of A with none."""

    tenant_a: str
    tenant_b: str
    admin_a: str
    admin_b: str
    plain_a: str  # every scope, no role
    entries: str


def configured(tenant: str, subject: str, roles: tuple[str, ...]) -> tuple[str, ApiKeyEntry]:
    key = f"fl_{uuid.uuid4().hex}"
    entry = ApiKeyEntry(
        sha256=hash_key(key), tenant=tenant, subject=subject, scopes=SCOPES, roles=roles
    )  # type: ignore[arg-type]
    return key, entry


@pytest.fixture
def admins() -> Admins:
    a, b = f"tenant-a-{uuid.uuid4().hex[:6]}", f"tenant-b-{uuid.uuid4().hex[:6]}"
    admin_a, entry_a = configured(a, "alice", ("PlatformAdmin", "Requester", "Reviewer"))
    admin_b, entry_b = configured(b, "bob", ("PlatformAdmin",))
    plain_a, entry_plain = configured(a, "anna", ())
    entries = "[" + ",".join(e.model_dump_json() for e in (entry_a, entry_b, entry_plain)) + "]"
    return Admins(a, b, admin_a, admin_b, plain_a, entries)


@dataclass(frozen=True)
class FakeKeys:
    entries: str


@pytest.fixture
async def access_runtime(database_url: str, admins: Admins) -> AsyncIterator[Runtime]:
    """The service with the access read model running, as an API process has it."""
    settings = settings_for(database_url, FakeKeys(admins.entries))  # type: ignore[arg-type]
    rt = await Runtime.open(settings)
    rt.start_projections(only=["access"])
    await rt.start_key_refresher()
    yield rt
    await rt.close()
