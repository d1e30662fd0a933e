"""With no agent configured, a run starts nothing, says so and records nothing (SPEC W69)."""

import httpx

from tests.conftest import Keys
from tests.e2e.conftest import auth
from tests.e2e.test_evals import lifted_case


async def test_a_run_with_no_agent_configured_records_nothing_and_says_why(
    http: httpx.AsyncClient, keys: Keys
) -> None:
    case = await lifted_case(http, keys.a, "Welchen Stundenansatz verrechne ich?")
    run = await http.post(
        f"/factory/evals/cases/{case['caseId']}/runs", json={}, headers=auth(keys.a)
    )
    assert run.status_code == 409
    assert run.json()["error"] == "not-configured"
    assert "no agent" in run.json()["message"]
    read = await http.get(
        f"/factory/evals/cases/{case['caseId']}",
        params={"minPosition": case["position"]},
        headers=auth(keys.a),
    )
    assert read.json()["runs"] == []
    assert read.json()["lastRun"] is None
