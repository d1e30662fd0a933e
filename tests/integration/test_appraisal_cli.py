"""The appraisal's readers as people run them: ``feedbackloop appraise``, ``health`` and
``charter show|check|write``, as processes of their own against a real PostgreSQL."""

import asyncio
import json
import os
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from projections.appraisal import AppraisalFacts
from services.processes.bootstrap import Runtime
from services.projecting.live import ProjectionRunner
from tests.conftest import Keys
from tests.e2e.conftest import ROOT

NOW = datetime.now(UTC)
CHARTER = """
[[line]]
id = "drafts-short"
text = "Drafts do not wait on me for long."
sensor = { kind = "outbox_age", setpoint = "1h" }
"""


async def cli(database_url: str | None, keys: Keys, *args: str) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FEEDBACKLOOP_AGENT")}
    if database_url is not None:
        env |= {"DATABASE_URL": database_url, "FEEDBACKLOOP_API_KEYS": keys.entries}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "services.processes.cli", *args, cwd=ROOT, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out, _ = await asyncio.wait_for(process.communicate(), timeout=120)
    return process.returncode or 0, out.decode()


def tenant_of(keys: Keys) -> str:
    return str(json.loads(keys.entries)[0]["tenant"])


async def runs(client: httpx.AsyncClient, count: int) -> None:
    """``count`` runs, each with a draft pending for three hours as it ended; the first also
    serves a charter line, was stopped and never resumed, and one is a test run."""
    for n in range(count):
        at = NOW - timedelta(hours=n + 1)
        data: dict[str, Any] = {
            "runId": f"run-{n}", "agentId": "coach", "outcome": "succeeded",
            "inputRef": "urn:in:1", "completedAt": at.isoformat(), "surface": "web",
            "counters": {"pendingDrafts": 1,
                         "oldestPendingDraftAt": (at - timedelta(hours=3)).isoformat(),
                         "goalPutToOwner": n == 0, "goalConfirmed": n == 0},
        }  # fmt: skip
        if n == 0:
            data |= {"serves": ["charter:drafts-short"], "stops": [{"stopId": "s-0"}],
                     "steps": [{"stepId": "st-1", "completed": True, "calls": []}]}  # fmt: skip
        event = {"specversion": "1.0", "id": f"r{n}", "source": "urn:run-control",
                 "type": "factory.runs.v1.RunCompleted", "data": data}  # fmt: skip
        answer = await client.post(
            "/factory/events",
            content=json.dumps(event).encode(),
            headers={"Content-Type": "application/cloudevents+json"},
        )
        assert answer.status_code == 201, answer.text  # fmt: skip
    test_run = {"specversion": "1.0", "id": "dev", "source": "urn:run-control",
                "type": "factory.runs.v1.RunCompleted",
                "data": {"runId": "run-dev", "agentId": "coach", "outcome": "succeeded",
                         "inputRef": "urn:in:1", "completedAt": NOW.isoformat(),
                         "development": True}}  # fmt: skip
    await client.post("/factory/events", content=json.dumps(test_run).encode(),
                      headers={"Content-Type": "application/cloudevents+json"})  # fmt: skip


async def caught_up(runtime: Runtime) -> None:
    runner = ProjectionRunner(runtime.store, runtime.pool, AppraisalFacts())
    await runner.start()
    await runner.catch_up()


async def test_charter_check_refuses_a_retired_kind_naming_the_spec_kind(
    tmp_path: Path, keys: Keys
) -> None:
    path = tmp_path / "charter.toml"
    path.write_text(CHARTER.replace("outbox_age", "inbox_age"))
    code, out = await cli(None, keys, "charter", "check", str(path))
    assert code == 1
    assert "request_closure" in out
    path.write_text(CHARTER)
    assert await cli(None, keys, "charter", "check", str(path)) == (0, "ok: 1 line(s)\n")


async def test_appraise_health_and_the_charter_from_the_command_line(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys, database_url: str, tmp_path: Path
) -> None:
    tenant = tenant_of(keys)
    path = tmp_path / "charter.toml"
    path.write_text(CHARTER)
    code, out = await cli(database_url, keys, "charter", "write", str(path), "--tenant", tenant,
                          "--by", "alice")  # fmt: skip
    assert code == 0, out
    await runs(client, 10)
    await caught_up(runtime)
    code, out = await cli(database_url, keys, "charter", "show", "--tenant", tenant, "--json")
    assert json.loads(out)["lines"][0]["id"] == "drafts-short"

    code, out = await cli(database_url, keys, "appraise", "--tenant", tenant, "--days", "2",
                          "--kind", "web", "--json", "--probe")  # fmt: skip
    assert code == 0, out
    said, _, document = out.partition("\n{")
    assert "no model configured" in said  # the paid pass: nothing asked, nothing recorded
    body = json.loads("{" + document)
    assert body["runs"] == 10
    assert body["labels"] == {"distress": 1, "neutral": 9}
    # the stop never resumed (M31): one −0.5, shown apart from any positive (M41)
    assert body["valence"] == {"positive": 0.0, "negative": 0.5, "shown": "\u22120.5",
                               "partial": False}  # fmt: skip
    assert (body["named_a_goal"], body["cite_a_charter_line"]) == (1, 1)
    assert (body["goal_put_to_owner"], body["goal_confirmed"]) == (1, 1)
    assert body["tests_hidden"] == 0  # --kind web: the test run is not web
    assert body["sessions_unreadable"] == 0
    assert body["outbox_read"] is True
    assert body["charter_read"] is True
    assert body["step_findings"] == {"null-step": 1}
    assert body["probe"]["ran"] is False
    assert "appraiser" not in body  # not asked for: omitted
    _, out = await cli(database_url, keys, "appraise", "--tenant", tenant, "--json")
    assert json.loads(out)["tests_hidden"] == 1  # M54
    _, out = await cli(database_url, keys, "appraise", "--tenant", tenant, "--kind", "test",
                       "--json")  # fmt: skip
    assert json.loads(out)["runs"] == 1  # --kind test implies --include-tests

    code, out = await cli(database_url, keys, "health", "--tenant", tenant, "--json")
    assert code == 0, out
    health = json.loads(out)
    (finding,) = health["doctor"]
    assert "drafts-short" in finding
    assert "each of the last 10 runs" in finding
    code, table = await cli(database_url, keys, "health", "--tenant", tenant)
    assert "doctor" in table


async def test_the_help_teaches_the_paid_passes_and_their_caps(keys: Keys) -> None:
    code, out = await cli(None, keys, "appraise", "--help")
    assert code == 0
    for said in ("--probe", "--max-probes", "--appraise", "--max-appraisals", "no model"):
        assert said in out
