"""The scheduler as processes of its own: ``kill -9`` mid-night and a restart that
finishes only the missing cases and conversations, a second pass that runs nothing, and two
schedulers started at once that make one night and one digest.

The service (``feedbackloop serve``) holds the API and the read models; the schedulers run
apart with the nightly runs on, the agent is the stand-in, answering slowly.
"""

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Keys, maintain
from tests.e2e.conftest import Service, agent_env, auth
from tests.e2e.test_evals import LOOKED, lifted_case
from tests.standin import ROOT
from tests.unit.test_wrong_answer import SEED_FACTS

MODEL = "claude-sonnet-4-5"
SCRIPT = {
    "modelName": MODEL,
    "delaySeconds": 0.3,
    "default": {"text": "Konzept-Ansatz CHF 150 steht im Firmenprofil.", "toolCalls": [LOOKED]},
}
CONVERSATIONS = 3


@pytest.fixture
def service_env(standin: str) -> dict[str, str]:
    return agent_env(standin)


@pytest.fixture
def scheduler_env(
    database_url: str, keys: Keys, service: Service, standin: str, tmp_path: Path
) -> dict[str, str]:
    catalogue = tmp_path / "models.json"
    catalogue.write_text(json.dumps({"models": {MODEL: {"residency": "eu"}}}))
    return {
        **os.environ,
        "DATABASE_URL": database_url,
        "FEEDBACKLOOP_API_KEYS": keys.entries,
        "FEEDBACKLOOP_METRICS_PORT": "0",
        "FEEDBACKLOOP_AGENT_URL": standin,
        "FEEDBACKLOOP_EVALS_NIGHTLY_ENABLED": "true",
        "FEEDBACKLOOP_EVALS_NIGHTLY_START_HOUR_UTC": "0",  # tonight's night is due now
        "FEEDBACKLOOP_EVALS_NIGHTLY_MAX_CASES": "3",
        "FEEDBACKLOOP_EVALS_NIGHTLY_MODEL": MODEL,  # the lifted cases pin none
        "FEEDBACKLOOP_EVALS_NIGHTLY_CONVERSATIONS_PER_CASE": str(CONVERSATIONS),
        "FEEDBACKLOOP_MODEL_CATALOGUE": str(catalogue),
    }


def start_scheduler(env: dict[str, str], log: Path, *args: str) -> subprocess.Popen[bytes]:
    with log.open("a") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "services.processes.cli", "scheduler", *args],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def thread_refs(standin: str) -> list[str]:
    """The conversations the agent was asked for, in the order asked."""
    received = httpx.get(f"{standin}/requests", timeout=10).json()
    return [r["body"]["threadRef"] for r in received if r["path"] == "/v1/reply"]


async def confirmed_cases(http: httpx.AsyncClient, key: str, count: int) -> list[str]:
    ids = []
    for n in range(count):
        case = await lifted_case(http, key, f"Welchen Stundenansatz verrechne ich ({n})?")
        confirmed = await http.post(
            f"/factory/evals/cases/{case['caseId']}/confirm",
            json={"confirmed": True},
            headers=auth(key),
        )
        assert confirmed.status_code == 200, confirmed.text
        ids.append(case["caseId"])
    return ids


async def ended_night(
    http: httpx.AsyncClient, key: str, logs: Callable[[], str], timeout: float = 90
) -> Any:
    today = datetime.now(UTC).date().isoformat()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = await http.get(f"/factory/evals/nights/{today}", headers=auth(key))
        if answer.status_code == 200 and answer.json()["status"] != "Running":
            return answer.json()
        await asyncio.sleep(0.5)
    raise AssertionError(f"the night did not end\n{logs()[-5000:]}")


async def test_kill_9_mid_night_then_a_restart_finishes_only_what_was_missing(
    http: httpx.AsyncClient,
    keys: Keys,
    standin: str,
    scheduler_env: dict[str, str],
    tmp_path: Path,
) -> None:
    """W89, W91, W92: each conversation is recorded as it finishes; a restart resumes the
    missing conversations and cases, and a finished one never runs again."""
    await confirmed_cases(http, keys.a, 4)
    log = tmp_path / "scheduler.log"
    first = start_scheduler(scheduler_env, log)
    try:
        deadline = time.monotonic() + 90
        while len(thread_refs(standin)) < CONVERSATIONS + 2:  # into the second case
            if time.monotonic() > deadline:
                today = datetime.now(UTC).date().isoformat()
                night = await http.get(f"/factory/evals/nights/{today}", headers=auth(keys.a))
                raise AssertionError(f"{night.text}\n{log.read_text()[-3000:]}")
            assert first.poll() is None, log.read_text()[-3000:]
            await asyncio.sleep(0.05)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(10)
    asked_before = thread_refs(standin)
    in_flight = asked_before[-1]  # asked, not answered: the kill came first

    second = start_scheduler(scheduler_env, log)
    try:
        night = await ended_night(http, keys.a, log.read_text)
    finally:
        second.terminate()
        second.wait(30)

    asked = Counter(thread_refs(standin))
    assert len(asked) == 3 * CONVERSATIONS  # three cases ran (the cap), every conversation
    repeated = {ref for ref, times in asked.items() if times > 1}
    assert repeated <= {in_flight}, repeated  # only the one cut off by the kill ran again
    outcomes = Counter(line["outcome"] for line in night["lines"])
    assert outcomes == {"ran": 3, "over-cap": 1}, night
    assert night["finishedAt"]

    # A second pass, ordered by hand: the night has ended, nothing runs (W92).
    again = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "services.processes.cli", "scheduler", "--order",
         f"night/{night['date']}"],
        cwd=ROOT, env=scheduler_env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert again.returncode == 0, again.stdout + again.stderr
    assert Counter(thread_refs(standin)) == asked


async def test_two_schedulers_started_at_once_make_one_night_and_one_digest(
    http: httpx.AsyncClient,
    keys: Keys,
    standin: str,
    scheduler_env: dict[str, str],
    tmp_path: Path,
) -> None:
    """Deterministic ids and one driver per night: two schedulers, two replicas or
    a restart never run a thing twice."""
    await confirmed_cases(http, keys.a, 2)
    logs = [tmp_path / "scheduler-1.log", tmp_path / "scheduler-2.log"]
    both = [start_scheduler(scheduler_env, log) for log in logs]
    try:
        night = await ended_night(http, keys.a, lambda: "\n".join(log.read_text() for log in logs))
    finally:
        for process in both:
            process.terminate()
        for process in both:
            process.wait(30)
    asked = Counter(thread_refs(standin))
    assert len(asked) == 2 * CONVERSATIONS
    assert set(asked.values()) == {1}  # each conversation asked once
    assert Counter(line["outcome"] for line in night["lines"]) == {"ran": 2}

    nights = await http.get("/factory/evals/nights", headers=auth(keys.a))
    assert [n["date"] for n in nights.json()["items"]] == [night["date"]]
    digests = await http.get("/factory/feedback/digests", headers=auth(keys.a))
    assert digests.status_code == 200, digests.text
    weeks = [d["week"] for d in digests.json()["items"]]
    assert len(weeks) == len(set(weeks)) == 1, weeks


async def confirmed_by(http: httpx.AsyncClient, key: str, prompt: str) -> str:
    """A report drafted, submitted, lifted and confirmed by ``key``'s holder (registered
    already as a maintainer of the agent); the case's id."""
    facts = {**SEED_FACTS, "prompt": prompt, "context": ["sglauser/AgenticOffice"]}
    draft = await http.post("/factory/reports/wrong-answer", json=facts, headers=auth(key))
    assert draft.status_code == 201, draft.text
    report = draft.json()["reportId"]
    submitted = await http.post(f"/factory/reports/{report}/submit", headers=auth(key))
    assert submitted.status_code == 200, submitted.text
    lifted = await http.post(f"/factory/reports/{report}/lift", headers=auth(key))
    assert lifted.status_code == 201, lifted.text
    case_id: str = lifted.json()["caseId"]
    confirmed = await http.post(
        f"/factory/evals/cases/{case_id}/confirm", json={"confirmed": True}, headers=auth(key)
    )
    assert confirmed.status_code == 200, confirmed.text
    return case_id


async def test_a_standalone_scheduler_asks_the_register_the_api_process_changed(
    http: httpx.AsyncClient,
    keys: Keys,
    scheduler_env: dict[str, str],
    tmp_path: Path,
) -> None:
    """SPEC W99, decisions D103, in a scheduler process of its own (no key ring kept fresh):
    sven holds only a key issued in the store and his roles granted there, and maintains the
    agent: his case runs. anna is taken out of the register through the API after she
    confirmed: her case does not run, and the night's line says why."""
    issued = await http.post(
        "/factory/keys",
        json={"subject": "sven", "scopes": ["factory.feedback.write", "factory.feedback.read",
                                            "factory.evaluation.read", "factory.evaluation.run"]},
        headers=auth(keys.a),
    )  # fmt: skip
    assert issued.status_code == 201, issued.text
    sven = issued.json()["key"]
    for role in ("Requester", "AssetMaintainer"):
        granted = await http.post(
            "/factory/roles/grant", json={"subject": "sven", "role": role}, headers=auth(keys.a)
        )
        assert granted.status_code == 200, granted.text
    await maintain(http, keys.a, ("alice", "anna", "sven"))
    svens = await confirmed_by(http, sven, "Welchen Stundenansatz verrechne ich (sven)?")
    annas = await confirmed_by(http, keys.a_other, "Welchen Stundenansatz verrechne ich (anna)?")
    await maintain(http, keys.a, ("alice", "sven"))  # anna is no maintainer any more

    log = tmp_path / "scheduler.log"
    scheduler = start_scheduler(scheduler_env, log)
    try:
        night = await ended_night(http, keys.a, log.read_text)
    finally:
        scheduler.terminate()
        scheduler.wait(30)
    lines = {line["case"]: line for line in night["lines"]}
    assert lines[svens]["outcome"] == "ran", night
    assert (lines[annas]["outcome"], lines[annas]["reason"]) == (
        "skipped",
        "confirmer-lacks-update",
    ), night
