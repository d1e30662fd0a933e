"""Comparisons end to end (decisions D180–D184): two confirmed cases, run on the current
runner and on a candidate that regresses on one of them, over the API and through the CI gate
(its exit codes and its single comment on a pull request, against the GitHub stand-in).

The agent is the stand-in agent as its own process: it answers the candidate's model on its
own rule (``forModel``), and a second stand-in process is a candidate named by its endpoint.
"""

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Keys
from tests.e2e.conftest import Service, agent_env, auth
from tests.e2e.test_evals import LOOKED, lifted_case
from tests.github_standin import Issue, github_standin
from tests.standin import ROOT, standin_agent

RIGHT = {"text": "Konzept-Ansatz CHF 150 steht im Firmenprofil.", "toolCalls": [LOOKED]}
WRONG = {"text": "CHF 120.", "toolCalls": []}
SCRIPT = {
    "modelName": "standin-1",
    "rules": [
        {"when": "Stundenansatz", "forModel": "cand-2", **WRONG},  # the candidate regresses
        {"when": "Stundenansatz", **RIGHT},
        {"when": "Tagessatz", **RIGHT},
    ],
    "default": {"text": "I don't know."},
}
REGRESSING = {"modelName": "other-1", "rules": [{"when": "Tagessatz", **WRONG}],
              "default": RIGHT}  # fmt: skip
TOKEN, REPO = "ghs-gate", "acme/app"


@pytest.fixture
def service_env(standin: str) -> dict[str, str]:
    return agent_env(standin)


def tenant_of(keys: Keys) -> str:
    return str(json.loads(keys.entries)[0]["tenant"])


async def two_confirmed_cases(http: httpx.AsyncClient, keys: Keys) -> list[str]:
    ids = []
    for prompt in ("Welchen Stundenansatz verrechne ich?", "Welchen Tagessatz verrechne ich?"):
        case = await lifted_case(http, keys.a, prompt)
        confirmed = await http.post(
            f"/factory/evals/cases/{case['caseId']}/confirm", json={"confirmed": True},
            headers=auth(keys.a),
        )  # fmt: skip
        assert confirmed.status_code == 200, confirmed.text
        ids.append(case["caseId"])
    return ids


async def confirmed_read(http: httpx.AsyncClient, keys: Keys, count: int) -> None:
    """The eval-cases read model has the confirmations (a comparison plans from it)."""
    for _ in range(200):
        listed = await http.get(
            "/factory/evals/cases", params={"confirmed": "true"}, headers=auth(keys.a)
        )
        if len(listed.json()["items"]) == count:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the confirmations never reached the read model")


async def test_a_comparison_shows_the_regressed_case_side_by_side(
    http: httpx.AsyncClient, keys: Keys, service: Service
) -> None:
    stunden, tages = await two_confirmed_cases(http, keys)
    await confirmed_read(http, keys, 2)
    body = {"agent": "AgenticOffice/Agent/OfficeCoach", "candidate": {"model": "cand-2"},
            "conversations": 2}  # fmt: skip
    started = await http.post("/factory/evals/comparisons", json=body, headers=auth(keys.a))
    assert started.status_code == 201, started.text
    view = started.json()
    assert (view["baseline"], view["candidate"], view["startedBy"]) == (None, "cand-2", "alice")
    assert (view["baselinePassRate"], view["candidatePassRate"]) == (1.0, 0.5)
    assert (view["regressed"], view["unchanged"], view["finished"]) == (1, 1, True)
    lines = {line["caseId"]: line for line in view["cases"]}
    assert lines[stunden]["change"] == "regressed"
    assert lines[stunden]["checksChanged"] == ["looked", "correct"]
    assert lines[stunden]["conversationsDiffering"] == 2
    pair = lines[stunden]["conversations"][0]
    assert pair["candidate"]["text"] == "CHF 120."
    assert pair["candidate"]["modelName"] == "cand-2"
    assert lines[tages]["change"] == "unchanged"
    assert lines[tages]["conversationsDiffering"] == 0

    read = await http.get(
        f"/factory/evals/comparisons/{view['comparisonId']}", headers=auth(keys.a)
    )
    assert read.status_code == 200
    assert read.json() == view
    other = await http.get(
        f"/factory/evals/comparisons/{view['comparisonId']}", headers=auth(keys.b)
    )
    assert other.status_code == 404  # another tenant's comparison is absent
    # A comparison is no case run: the cases' history and lastRun are as they were (D181).
    case = (await http.get(f"/factory/evals/cases/{stunden}", headers=auth(keys.a))).json()
    assert case["lastRun"] is None
    assert case["runs"] == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"agent": "AgenticOffice/Agent/OfficeCoach"}, "candidate"),
        ({"agent": "AgenticOffice/Agent/OfficeCoach", "candidate": {"model": ""}}, "model"),
        ({"agent": "Nobody/Agent", "candidate": {"model": "m"}}, "agent"),
        (
            {
                "agent": "AgenticOffice/Agent/OfficeCoach",
                "candidate": {"model": "m"},
                "conversations": 21,
            },
            "conversations",
        ),
        (
            {
                "agent": "AgenticOffice/Agent/OfficeCoach",
                "candidate": {"model": "m"},
                "startedBy": "mallory",
            },
            "startedBy",
        ),
    ],
)
async def test_a_bad_comparison_is_refused_naming_the_field_and_records_nothing(
    http: httpx.AsyncClient, keys: Keys, service: Service, body: dict[str, Any], field: str
) -> None:
    answer = await http.post("/factory/evals/comparisons", json=body, headers=auth(keys.a))
    assert answer.status_code == 422, answer.text
    said = json.dumps(answer.json())
    assert field in said, said


async def test_a_service_key_cannot_start_a_comparison(
    http: httpx.AsyncClient, keys: Keys, service: Service
) -> None:
    """SPEC W56, W57: conversations run as the person who asked."""
    body = {"agent": "AgenticOffice/Agent/OfficeCoach", "candidate": {"model": "m"}}
    answer = await http.post("/factory/evals/comparisons", json=body, headers=auth(keys.a_service))
    assert answer.status_code == 422
    assert answer.json()["field"] == "ranBy"


def run_gate(env: dict[str, str], *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "services.processes.cli", "gate", *options],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


async def test_the_gate_fails_on_a_regression_and_comments_the_pull_request_once(
    http: httpx.AsyncClient,
    keys: Keys,
    service: Service,
    standin: str,
    database_url: str,
    kafka_bootstrap: str,
    tmp_path: Path,
) -> None:
    await two_confirmed_cases(http, keys)
    await confirmed_read(http, keys, 2)
    tenant = tenant_of(keys)
    with github_standin(TOKEN, {REPO}) as github, standin_agent(REGRESSING, tmp_path) as other:
        github.issues.append(Issue(7, REPO, "A pull request", "", []))  # a PR is an issue
        env = {
            **os.environ, "DATABASE_URL": database_url, "KAFKA_BOOTSTRAP_SERVERS": kafka_bootstrap,
            "FEEDBACKLOOP_TOPIC_PREFIX": service.prefix, "FEEDBACKLOOP_API_KEYS": keys.entries,
            "FEEDBACKLOOP_AGENT_URL": standin, "FEEDBACKLOOP_AGENT_KIND": "http",
            "FEEDBACKLOOP_TRACKERS": json.dumps({tenant: {"url": github.url, "token": TOKEN}}),
        }  # fmt: skip
        agent = ("--tenant", tenant, "--agent", "AgenticOffice/Agent/OfficeCoach",
                 "--conversations", "1")  # fmt: skip
        pr = ("--pr", "7", "--repository", REPO, "--commit", "abc123")

        failed = run_gate(env, *agent, "--candidate", "cand-2", *pr)
        assert failed.returncode == 1, failed.stdout + failed.stderr
        assert "regressed" in failed.stdout
        assert "commented on the pull request" in failed.stdout
        again = run_gate(env, *agent, "--candidate", "cand-2", *pr)
        assert again.returncode == 1, again.stdout + again.stderr
        (comment,) = github.issues[0].comments  # exactly once per commit (D184)
        assert "regression" in comment["body"]
        assert "<!-- feedbackloop-item: gate/" in comment["body"]

        passed = run_gate(env, *agent, "--candidate", "same-answers")
        assert passed.returncode == 0, passed.stdout + passed.stderr
        assert "0 regressed" in passed.stdout

        # A candidate named by its endpoint: another agent, which regresses on Tagessatz.
        endpoint = run_gate(env, *agent, "--candidate", other)
        assert endpoint.returncode == 1, endpoint.stdout + endpoint.stderr

        for bad in (("--candidate", ""), ("--candidate", "m", "--conversations", "0"),
                    ("--candidate", "m", "--repository", "no-slash")):  # fmt: skip
            refused = run_gate(env, *agent[:4], *bad)
            assert refused.returncode == 2, refused.stdout + refused.stderr
        nobody = run_gate(env, "--tenant", tenant, "--agent", "Nobody/Agent", "--candidate", "m")
        assert nobody.returncode == 2
        assert "--agent" in nobody.stderr
        assert github.violations == []
        assert len(github.issues[0].comments) == 1
