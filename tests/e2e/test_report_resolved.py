"""The reporter hears back (SPEC W33; decisions D51), driven over HTTP as two people of one
tenant and a person of another see it: closing a report publishes ``report-resolved`` (v2) on
Kafka and to the signed webhook, naming nobody: its subscriber reads whom to tell at
``reportPath`` with a key of the tenant (decisions D139); each person's ``mine`` lists only
their own reports with the outcome."""

import asyncio
import json
from typing import Any

import httpx

from tests.conftest import Keys
from tests.e2e.conftest import Receiver, Service, auth, listed
from tests.kafka_peer import consume

TOPIC = "evaluation.feedback.v2.report-resolved"


async def reported(http: httpx.AsyncClient, key: str, message: str) -> str:
    """A report kept in the Inbox (an answer report is never handed over, W21)."""
    drafted = await http.post(
        "/factory/reports", json={"category": "answer", "message": message}, headers=auth(key)
    )
    assert drafted.status_code == 201, drafted.text
    report_id: str = drafted.json()["reportId"]
    submitted = await http.post(f"/factory/reports/{report_id}/submit", headers=auth(key))
    assert submitted.json()["status"] == "New", submitted.text
    return report_id


async def reviewed(
    http: httpx.AsyncClient, key: str, report_id: str, body: dict[str, Any]
) -> httpx.Response:
    for move in ({"status": "Triaged"}, body):
        response = await http.post(
            f"/factory/reports/{report_id}/review", json=move, headers=auth(key)
        )
        assert response.status_code == 200, response.text
    return response


async def test_the_reporter_of_a_resolved_report_hears_back_and_nobody_else_sees_it(
    http: httpx.AsyncClient, keys: Keys, service: Service, receiver: Receiver,
    kafka_bootstrap: str,
) -> None:  # fmt: skip
    alices = await reported(http, keys.a, "It said my course does not exist.")
    annas = await reported(http, keys.a_other, "It quoted last year's fees.")
    # The reviewer is another person: the notice names the reporter, not who closed it.
    resolved = await reviewed(
        http, keys.a_other, alices,
        {"status": "Resolved", "change": "Searches the profile first.",
         "link": "https://example.org/change/42"},
    )  # fmt: skip
    await reviewed(http, keys.a, annas, {"status": "WontFix", "reason": "The fees are right."})

    messages = await consume(kafka_bootstrap, service.prefix + TOPIC, 2)
    by_report = {json.loads(m.value)["data"]["reportId"]: json.loads(m.value) for m in messages}
    assert set(by_report) == {alices, annas}
    told_alice = by_report[alices]
    assert told_alice["type"] == "evaluation.feedback.v2.ReportResolved"
    assert told_alice["data"] == {
        "reportId": alices,
        "tenantId": told_alice["tenantid"],
        "outcome": "Resolved",
        "reportPath": f"/factory/reports/{alices}",
    }
    told_anna = by_report[annas]["data"]
    assert told_anna["outcome"] == "WontFix"
    assert not [m for m in messages if b"alice" in m.value or b"anna" in m.value]
    # The subscriber reads whom to tell, and what changed, at reportPath (a key of the tenant).
    read = await http.get(told_alice["data"]["reportPath"], headers=auth(keys.a_other))
    assert read.status_code == 200, read.text
    assert read.json()["reporter"] == "alice"
    assert read.json()["review"]["change"] == "Searches the profile first."
    assert read.json()["review"]["link"] == "https://example.org/change/42"
    read = await http.get(told_anna["reportPath"], headers=auth(keys.a))
    assert (read.json()["reporter"], read.json()["review"]["reason"]) == (
        "anna",
        "The fees are right.",
    )
    # Another tenant's key reads nothing there.
    assert (await http.get(told_anna["reportPath"], headers=auth(keys.b))).status_code in (403, 404)

    # The same CloudEvents reach the signed webhook (the hand-over route).
    async with asyncio.timeout(60):
        while len([r for r in receiver.received if r["event"]["type"].endswith("Resolved")]) < 2:
            await asyncio.sleep(0.1)
    delivered = {r["event"]["id"] for r in receiver.received if r["verified"]}
    assert {m["id"] for m in by_report.values()} <= delivered

    mine = await listed(
        http, "/factory/reports/mine", keys.a, 1, minPosition=resolved.json()["position"]
    )
    assert [(r["reportId"], r["status"]) for r in mine] == [(alices, "Resolved")]
    assert mine[0]["review"]["change"] == "Searches the profile first."
    assert mine[0]["review"]["link"] == "https://example.org/change/42"
    (annas_own,) = await listed(http, "/factory/reports/mine", keys.a_other, 1)
    assert (annas_own["reportId"], annas_own["review"]["reason"]) == (annas, "The fees are right.")
    # Another tenant's person has no reports here at all.
    other = await http.get("/factory/reports/mine", headers=auth(keys.b))
    assert other.status_code == 200, other.text
    assert other.json()["items"] == []


async def test_mine_pages_and_filters_by_status(
    http: httpx.AsyncClient, keys: Keys, service: Service
) -> None:
    first = await reported(http, keys.a, "First.")
    second = await reported(http, keys.a, "Second.")
    third = await reported(http, keys.a, "Third.")
    # Another person reviews: nobody reviews their own report (decisions D24).
    closing = await reviewed(
        http, keys.a_other, second, {"status": "WontFix", "reason": "Duplicate."}
    )
    page = await http.get(
        "/factory/reports/mine",
        params={"limit": 2, "minPosition": closing.json()["position"]},
        headers=auth(keys.a),
    )
    assert [r["reportId"] for r in page.json()["items"]] == [second, third]  # newest change first
    following = await http.get(
        "/factory/reports/mine", params={"limit": 2, "before": page.json()["next"]},
        headers=auth(keys.a),
    )  # fmt: skip
    assert [r["reportId"] for r in following.json()["items"]] == [first]
    assert following.json()["next"] is None
    closed = await http.get(
        "/factory/reports/mine", params={"status": "WontFix"}, headers=auth(keys.a)
    )
    assert [r["reportId"] for r in closed.json()["items"]] == [second]
    refused = await http.get(
        "/factory/reports/mine", params={"status": "Lost"}, headers=auth(keys.a)
    )
    assert refused.status_code in (400, 422), refused.text
    assert "status" in refused.text
