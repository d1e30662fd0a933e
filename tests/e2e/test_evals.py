"""Eval cases end to end: report → lift → confirm → run real conversations → scored lastRun.

The agent under test is the stand-in agent, served over real HTTP by its own process.
"""

import json
from typing import Any

import httpx
import pytest

from tests.conftest import Keys, maintain
from tests.e2e.conftest import Service, agent_env, auth
from tests.kafka_peer import consume
from tests.unit.test_wrong_answer import SEED_FACTS

NODE = "sglauser/AgenticOffice/Firmenprofil"
LOOKED = {"name": "Get", "arguments": NODE, "result": "Konzept-Ansatz: CHF 150"}
SCRIPT = {
    "modelName": "standin-1",
    "rules": [
        {
            # 4 of 5 conversations look the profile up and answer right; one does not look.
            "when": "Stundenansatz",
            "replies": [
                {"text": "Der  konzept-Ansatz CHF 150 steht im Firmenprofil.",
                 "toolCalls": [LOOKED]},
                {"text": "Konzept-Ansatz CHF 150 steht im FIRMENPROFIL", "toolCalls": [LOOKED]},
                {"text": "Ich weiss es nicht."},
                {"text": "Ja: Konzept-Ansatz CHF 150 steht im Firmenprofil.",
                 "toolCalls": [LOOKED]},
                {"text": "Laut Firmenprofil: CHF 150.", "toolCalls": [LOOKED]},
            ],
        },
        {"when": "Tagessatz", "modelName": "standin-small", "text": "CHF 1200.",
         "toolCalls": [LOOKED]},
    ],
    "default": {"text": "I don't know."},
}  # fmt: skip


@pytest.fixture
def service_env(standin: str) -> dict[str, str]:
    return agent_env(standin)


async def lifted_case(http: httpx.AsyncClient, key: str, prompt: str) -> dict[str, Any]:
    """A report lifted by ``key``'s holder, its agent registered with them (and anna) as its
    maintainers (decisions D77)."""
    await maintain(http, key)
    facts = {**SEED_FACTS, "prompt": prompt, "context": ["sglauser/AgenticOffice"]}
    draft = (await http.post("/factory/reports/wrong-answer", json=facts, headers=auth(key))).json()
    await http.post(f"/factory/reports/{draft['reportId']}/submit", headers=auth(key))
    lifted = await http.post(f"/factory/reports/{draft['reportId']}/lift", headers=auth(key))
    assert lifted.status_code == 201, lifted.text
    return dict(lifted.json())


async def test_a_report_becomes_a_confirmed_case_that_runs_five_scored_conversations(
    http: httpx.AsyncClient, keys: Keys, service: Service, kafka_bootstrap: str
) -> None:
    case = await lifted_case(http, keys.a, "Welchen Stundenansatz verrechne ich?")
    assert case["ref"].startswith("_Evals/AgenticOffice_Agent_OfficeCoach/")
    again = await http.post("/factory/evals/cases", json={"source": None}, headers=auth(keys.a))
    assert again.status_code == 422  # a source is needed
    case_id = case["caseId"]
    confirmed = await http.post(
        f"/factory/evals/cases/{case_id}/confirm", json={"confirmed": True}, headers=auth(keys.a)
    )
    assert confirmed.json()["confirmedBy"] == "alice"  # stamped from the caller (W74)

    run = await http.post(f"/factory/evals/cases/{case_id}/runs", json={}, headers=auth(keys.a))
    assert run.status_code == 201, run.text
    last = run.json()
    assert last["ranBy"] == "alice"
    assert len(last["threads"]) == 5
    summary = last["summary"]
    assert (summary["scored"], summary["looked"], summary["not_invented"]) == (5, 4, 5)
    assert summary["correct"] == 3  # text compared after case and whitespace folding
    assert summary["passed"] is True  # looked 4/5 = 0.8 ≥ 0.8, correct 3/5 = 0.6 ≥ 0.6
    assert all(t["threadRef"].startswith(f"{case['ref']}/_Thread/") for t in last["threads"])
    assert (last["model"], last["effort"]) == (None, "medium")
    assert last["position"] != case["position"]  # opaque tokens: a later write, another token
    record = await http.get(
        last["threads"][2]["link"], params={"minPosition": last["position"]}, headers=auth(keys.a)
    )
    assert record.json()["text"] == "Ich weiss es nicht."
    assert record.json()["score"]["looked"] is False

    read = await http.get(
        f"/factory/evals/cases/{case_id}", params={"minPosition": last["position"]},
        headers=auth(keys.a),
    )  # fmt: skip
    body = read.json()
    assert body["mustGround"] == [NODE]
    assert body["mustAssert"] == "Konzept-Ansatz CHF 150 steht im Firmenprofil"
    assert body["confirmedBy"] == "alice"
    assert body["passed"] is True
    assert [r["runId"] for r in body["runs"]] == [last["runId"]]
    listed = await http.get(
        "/factory/evals/cases",
        params={"agent": "AgenticOffice/Agent/OfficeCoach"},
        headers=auth(keys.a),
    )
    assert [c["caseId"] for c in listed.json()["items"]] == [case_id]
    assert (await http.get("/factory/evals/cases", headers=auth(keys.b))).json()["items"] == []
    # Other services follow agent quality on Kafka.
    (completed,) = await consume(
        kafka_bootstrap, service.prefix + "evaluation.evals.v1.run-completed", 1
    )
    data = json.loads(completed.value)["data"]
    assert (data["caseId"], data["passed"], data["ranBy"]) == (case_id, True, "alice")


async def test_a_round_never_runs_as_a_service_identity(
    http: httpx.AsyncClient, keys: Keys
) -> None:
    """SPEC W56, W57: each round runs as the person who pressed Run."""
    case = await lifted_case(http, keys.a, "Welchen Stundenansatz verrechne ich?")
    run = await http.post(
        f"/factory/evals/cases/{case['caseId']}/runs", json={}, headers=auth(keys.a_service)
    )
    assert run.status_code == 422
    assert run.json()["field"] == "ranBy"
    forged = await http.post(
        f"/factory/evals/cases/{case['caseId']}/runs", json={"ranBy": "alice"},
        headers=auth(keys.a),
    )  # fmt: skip
    assert forged.status_code == 422
    assert forged.json()["field"] == "ranBy"


async def test_a_reply_on_another_model_than_the_pinned_one_is_a_non_answer(
    http: httpx.AsyncClient, keys: Keys
) -> None:
    """SPEC W71: never an invention, and zero scored runs is never a pass (W67)."""
    case = await lifted_case(http, keys.a, "Welchen Tagessatz verrechne ich?")
    pinned = await http.patch(
        f"/factory/evals/cases/{case['caseId']}", json={"model": "standin-large"},
        headers=auth(keys.a),
    )  # fmt: skip
    assert pinned.status_code == 200, pinned.text
    run = await http.post(
        f"/factory/evals/cases/{case['caseId']}/runs", json={"conversations": 2},
        headers=auth(keys.a),
    )  # fmt: skip
    summary = run.json()["summary"]
    assert (summary["scored"], summary["non_answers"], summary["passed"]) == (0, 2, False)
    reasons = {t["score"]["reason"] for t in run.json()["threads"]}
    assert reasons == {"answered-on-another-model: standin-small"}
    assert all(t["score"]["invented"] is False for t in run.json()["threads"])


async def test_a_forged_confirmer_is_refused_on_create_and_on_patch(
    http: httpx.AsyncClient, keys: Keys
) -> None:
    """SPEC W73, W77."""
    case = await lifted_case(http, keys.a, "Welchen Stundenansatz verrechne ich?")
    created = await http.post(
        "/factory/evals/cases",
        json={"source": case["caseId"], "confirmedBy": "mallory"},
        headers=auth(keys.a),
    )
    assert created.status_code == 422
    assert created.json()["field"] == "confirmedBy"
    patched = await http.patch(
        f"/factory/evals/cases/{case['caseId']}",
        json={"confirmedBy": "mallory"},
        headers=auth(keys.a),
    )
    assert patched.status_code == 422
    assert patched.json()["field"] == "confirmedBy"
    cleared = await http.patch(
        f"/factory/evals/cases/{case['caseId']}", json={"prompt": None}, headers=auth(keys.a)
    )
    assert cleared.status_code == 422
    assert cleared.json()["field"] == "prompt"
    confirmed = await http.post(
        f"/factory/evals/cases/{case['caseId']}/confirm",
        json={"confirmed": True, "confirmedBy": "mallory"},
        headers=auth(keys.a),
    )
    assert confirmed.status_code == 422
    read = await http.get(
        f"/factory/evals/cases/{case['caseId']}", params={"minPosition": case["position"]},
        headers=auth(keys.a),
    )  # fmt: skip
    assert read.json()["confirmedBy"] is None


async def test_lifting_a_bug_report_is_refused_with_the_reason(
    http: httpx.AsyncClient, keys: Keys
) -> None:
    """SPEC W49."""
    draft = await http.post(
        "/factory/reports", json={"category": "bug", "message": "crash"}, headers=auth(keys.a)
    )
    report_id = draft.json()["reportId"]
    await http.post(f"/factory/reports/{report_id}/submit", headers=auth(keys.a))
    refused = await http.post(f"/factory/reports/{report_id}/lift", headers=auth(keys.a))
    assert refused.status_code == 422
    assert "labelled block" in refused.json()["message"]
