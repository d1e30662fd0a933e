"""``feedbackloop keys`` and ``feedbackloop roles`` at the machine (decisions D28): each
change an event under the operator's name, taken by a running API process from the next
request on (it hears the read model move; nothing is asked of it)."""

import asyncio
import os
import sys

from services.bus.audit import AuditFilter, audit_page
from services.processes.bootstrap import Runtime
from tests.conftest import client_for
from tests.integration.access_keys import Admins

READ = "/factory/feedback/digests"


async def feedbackloop(database_url: str, *args: str) -> str:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "services.processes.cli", *args,
        env={**os.environ, "DATABASE_URL": database_url, "COLUMNS": "200"},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    said, _ = await process.communicate()
    assert process.returncode == 0, said.decode()
    return said.decode()


async def until_identified(runtime: Runtime, key: str, known: bool) -> None:
    async with asyncio.timeout(30):  # the NOTIFY is asynchronous: waited for, bounded
        while (runtime.keys.identify(key) is not None) != known:
            await asyncio.sleep(0.02)


async def until_holding(runtime: Runtime, key: str, role: str) -> None:
    async with asyncio.timeout(30):
        while True:
            principal = runtime.keys.identify(key)
            if principal is not None and role in principal.roles:
                return
            await asyncio.sleep(0.02)


async def test_keys_and_roles_changed_at_the_machine_hold_in_a_running_api_process(
    access_runtime: Runtime, admins: Admins, database_url: str
) -> None:
    tenant = admins.tenant_a
    made = await feedbackloop(
        database_url, "keys", "new", "--store", "--tenant", tenant, "--subject", "bruno",
        "--scope", "factory.feedback.read",
    )  # fmt: skip
    lines = dict(line.split(":", 1) for line in made.strip().splitlines() if ":" in line)
    key, key_id = lines["key"].strip(), lines["key id"].strip()
    await until_identified(access_runtime, key, known=True)
    async with client_for(access_runtime, key) as bruno:
        # Known, but holding no role yet: a stored key holds what is granted to its subject
        # (decisions D26), and every read asks a role (D23, D76).
        unread = await bruno.get(READ)
        assert unread.status_code == 403, unread.text
        assert unread.json()["field"] == "role"
        assert (await bruno.get("/factory/roles")).status_code == 403
        await feedbackloop(
            database_url, "roles", "grant", "--tenant", tenant, "bruno", "PlatformAdmin"
        )
        await until_holding(access_runtime, key, "PlatformAdmin")
        grants = (await bruno.get("/factory/roles")).json()["items"]
        assert [(g["subject"], g["role"]) for g in grants] == [("bruno", "PlatformAdmin")]
        assert grants[0]["grantedBy"].startswith("operator:")
        assert (await bruno.get(READ)).status_code == 200
        listed = await feedbackloop(database_url, "roles", "list", "--tenant", tenant)
        assert "bruno" in listed
        assert "1 grants" in listed
        await feedbackloop(database_url, "keys", "revoke", "--tenant", tenant, key_id)
        await until_identified(access_runtime, key, known=False)
        assert (await bruno.get(READ)).status_code == 401
    keys = await feedbackloop(database_url, "keys", "list", "--tenant", tenant)
    assert key_id[:8] in keys
    assert "1 keys" in keys
    # Decisions D110: each decision is one row naming its door, the machine's ones the CLI;
    # bruno's two refused reads (before his grant) are the HTTP door's own rows.
    await access_runtime.bus.flush_audit()
    rows, _ = await audit_page(access_runtime.pool, tenant, AuditFilter())
    assert [(r["command"], r["result"], r["door"]) for r in reversed(rows)] == [
        ("IssueApiKey", "applied", "cli"),
        ("GET /factory/feedback/digests", "refused", "http"),
        ("GET /factory/roles", "refused", "http"),
        ("GrantRole", "applied", "cli"),
        ("RevokeApiKey", "applied", "cli"),
    ]
