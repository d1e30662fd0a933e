"""Reports, driven over HTTP as a chat client, a reviewer and engineering triage see them."""

import asyncio
import json
from typing import Any

import asyncpg
import httpx
import pytest

from tests.conftest import Keys
from tests.e2e.conftest import Receiver, Service, auth, listed
from tests.kafka_peer import consume
from tests.unit.test_wrong_answer import SEED_BLOCK, SEED_FACTS


async def inbox(http: httpx.AsyncClient, key: str, count: int, **params: Any) -> list[Any]:
    return await listed(http, "/factory/reports/inbox", key, count, **params)


async def until(predicate: Any, timeout: float = 60) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.1)


async def test_a_wrong_answer_report_is_composed_submitted_and_triaged_in_the_inbox(
    http: httpx.AsyncClient, keys: Keys, service: Service, kafka_bootstrap: str
) -> None:
    composed = await http.post(
        "/factory/reports/wrong-answer", json=SEED_FACTS, headers=auth(keys.a)
    )
    assert composed.status_code == 201, composed.text
    draft = composed.json()
    assert (draft["status"], draft["category"], draft["kind"]) == ("Draft", "answer", "not-found")
    assert draft["extraContext"].startswith("Kind: not-found\nThread: sglauser/_Thread/")
    report_id = draft["reportId"]
    # A draft is a preview: not in the Inbox.
    preview = await http.get(
        f"/factory/reports/{report_id}", params={"minPosition": draft["position"]},
        headers=auth(keys.a),
    )  # fmt: skip
    assert preview.json()["status"] == "Draft"
    assert (await http.get("/factory/reports/inbox", headers=auth(keys.a))).json()["items"] == []

    submitted = await http.post(f"/factory/reports/{report_id}/submit", headers=auth(keys.a))
    assert submitted.json()["handedOver"] is False  # W21: an answer report never is
    # not-found is an agent-owner kind: the agent's owner is told (W35).
    (notice,) = await consume(
        kafka_bootstrap, service.prefix + "evaluation.feedback.v1.agent-owner-notified", 1
    )
    assert json.loads(notice.value)["data"]["agent"] == "AgenticOffice/Agent/OfficeCoach"
    (item,) = await inbox(http, keys.a, 1, agent="AgenticOffice/Agent/OfficeCoach")
    assert item["parsed"] == {
        "kind": "not-found",
        "agent": "AgenticOffice/Agent/OfficeCoach",
        "model": "claude-sonnet-4-5",
        # W13, decisions D25: the register holds no maintainers of this agent here, and the
        # ones the report names are not read.
        "addressee": "agent owner (AgenticOffice/Agent/OfficeCoach)",
    }
    assert item["message"] == SEED_FACTS["account"]
    assert (await http.get("/factory/reports/inbox", headers=auth(keys.b))).json()["items"] == []

    async def review(body: dict[str, Any]) -> httpx.Response:
        return await http.post(
            f"/factory/reports/{report_id}/review", json=body, headers=auth(keys.a_other)
        )

    assert (await review({"status": "Triaged"})).json()["status"] == "Triaged"
    resolved = await review(
        {"status": "Resolved", "change": "The coach now searches the profile first.",
         "link": "https://example.org/change/42"}
    )  # fmt: skip
    assert resolved.status_code == 200, resolved.text
    refused = await review({"status": "New"})
    assert refused.status_code == 409
    assert refused.json()["from"] == "Resolved"
    assert refused.json()["to"] == "New"
    (item,) = await inbox(
        http, keys.a, 1, status="Resolved", minPosition=resolved.json()["position"]
    )
    assert (
        item["review"]["reviewedBy"] == "anna"
    )  # another person than its reporter (decisions D24)
    assert item["review"]["change"] == "The coach now searches the profile first."


async def test_a_kind_fabricated_report_notifies_the_owner_on_kafka_and_events_keep_flowing(
    http: httpx.AsyncClient, keys: Keys, service: Service, kafka_bootstrap: str
) -> None:
    """``Kind: Fabricated`` (capital F) is stored as ``fabricated``, its notice reaches Kafka,
    and a later event still does: one report's spelling never stops every tenant's
    publication."""
    block = SEED_BLOCK.replace("Kind: not-found", "Kind: Fabricated")
    drafted = await http.post(
        "/factory/reports",
        json={"category": "answer", "message": "It made the rate up.", "extraContext": block},
        headers=auth(keys.a),
    )
    assert drafted.status_code == 201, drafted.text
    report_id = drafted.json()["reportId"]
    submitted = await http.post(f"/factory/reports/{report_id}/submit", headers=auth(keys.a))
    assert submitted.status_code == 200, submitted.text

    (notice,) = await consume(
        kafka_bootstrap, service.prefix + "evaluation.feedback.v1.agent-owner-notified", 1
    )
    data = json.loads(notice.value)["data"]
    assert (data["reportId"], data["kind"]) == (report_id, "fabricated")
    assert data["agent"] == "AgenticOffice/Agent/OfficeCoach"

    later = await http.post(
        "/factory/feedback",
        json={"projectId": "p", "subjectKind": "run", "subjectRef": "r-9", "kind": "escalation"},
        headers=auth(keys.a),
    )
    assert later.status_code == 201, later.text
    (recorded,) = await consume(
        kafka_bootstrap, service.prefix + "evaluation.feedback.v1.feedback-recorded", 1
    )
    assert json.loads(recorded.value)["data"]["feedbackId"] == later.json()["feedbackId"]
    stored = await http.get(
        f"/factory/reports/{report_id}",
        params={"minPosition": submitted.json()["position"]},
        headers=auth(keys.a),
    )
    assert stored.json()["parsed"]["kind"] == "fabricated"


async def test_a_bug_report_is_handed_over_on_kafka_and_to_the_signed_webhook(
    http: httpx.AsyncClient, keys: Keys, service: Service, receiver: Receiver,
    kafka_bootstrap: str,
) -> None:  # fmt: skip
    drafted = await http.post(
        "/factory/reports",
        json={"category": "bug", "message": "The export button does nothing."},
        headers=auth(keys.a),
    )
    report_id = drafted.json()["reportId"]
    submitted = await http.post(f"/factory/reports/{report_id}/submit", headers=auth(keys.a))
    assert submitted.json()["handedOver"] is True

    (message,) = await consume(
        kafka_bootstrap, service.prefix + "evaluation.feedback.v2.feedback-handed-over", 1
    )
    handed = json.loads(message.value)
    assert handed["type"] == "evaluation.feedback.v2.FeedbackHandedOver"
    assert handed["data"]["reportId"] == report_id
    # The text by reference (decisions D74): read through the API, never on Kafka.
    assert b"export button" not in message.value
    assert handed["data"]["reportPath"] == f"/factory/reports/{report_id}"

    await until(lambda: len(receiver.received) >= 1)
    (delivery,) = receiver.received
    assert delivery["verified"] is True
    assert delivery["event"]["id"] == handed["id"]  # the same CloudEvent on both routes
    # A handed-over report is engineering's, not the Inbox's.
    assert (await http.get("/factory/reports/inbox", headers=auth(keys.a))).json()["items"] == []


async def test_a_hand_over_the_webhook_never_accepts_shows_in_the_inbox(
    http: httpx.AsyncClient, keys: Keys, receiver: Receiver
) -> None:
    receiver.status = 503
    drafted = await http.post(
        "/factory/reports",
        json={"category": "idea", "message": "Let me export to CSV."},
        headers=auth(keys.a),
    )
    report_id = drafted.json()["reportId"]
    await http.post(f"/factory/reports/{report_id}/submit", headers=auth(keys.a))
    (item,) = await inbox(http, keys.a, 1)
    assert item["reportId"] == report_id
    assert item["handOver"]["failed"] is True
    assert item["handOver"]["attempts"] == 3
    assert item["handOver"]["lastError"] == "HTTP 503"
    assert len(receiver.received) == 3


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/factory/reports", b"{not json", "body"),
        ("/factory/reports", b'{"category": "bug", "message": "x"', "body"),
        ("/factory/reports", {"category": "rant", "message": "x"}, "category"),
        (
            "/factory/reports",
            {"category": "bug", "message": "x", "extraContext": "y" * 16_001},
            "extraContext",
        ),
        ("/factory/reports/wrong-answer", {**SEED_FACTS, "account": "x" * 8_001}, "account"),
        ("/factory/reports", {"category": "bug", "message": ""}, "message"),
        ("/factory/reports", {"category": "bug", "message": "x" * 8_001}, "message"),
        ("/factory/reports", {"category": "bug", "message": "x", "reviewedBy": "me"}, "reviewedBy"),
        ("/factory/reports", {"category": "bug", "message": "x", "reporter": "me"}, "reporter"),
        ("/factory/reports/wrong-answer", {**SEED_FACTS, "reply": {}}, "reply.agentName"),
    ],
)
async def test_bad_reports_are_refused_naming_the_problem_and_nothing_is_stored(
    http: httpx.AsyncClient,
    keys: Keys,
    database_url: str,
    path: str,
    body: dict[str, Any] | bytes,
    field: str,
) -> None:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    response = await http.post(
        path, content=content, headers={**auth(keys.a), "Content-Type": "application/json"}
    )
    assert response.status_code == 422, response.text
    assert response.json()["field"] == field
    assert await stored_events(database_url) == 0


async def stored_events(database_url: str) -> int:
    """What the event store holds, read straight from PostgreSQL."""
    conn = await asyncpg.connect(database_url)
    try:
        return int(await conn.fetchval("SELECT count(*) FROM feedbackloop_events"))
    finally:
        await conn.close()


async def test_a_forged_reviewer_is_refused(http: httpx.AsyncClient, keys: Keys) -> None:
    drafted = await http.post(
        "/factory/reports", json={"category": "answer", "message": "wrong"}, headers=auth(keys.a)
    )
    report_id = drafted.json()["reportId"]
    await http.post(f"/factory/reports/{report_id}/submit", headers=auth(keys.a))
    forged = await http.post(
        f"/factory/reports/{report_id}/review",
        json={"status": "Triaged", "reviewedBy": "the-boss"},
        headers=auth(keys.a),
    )
    assert forged.status_code == 422
    assert forged.json()["field"] == "reviewedBy"
    (item,) = await inbox(http, keys.a, 1)
    assert item["status"] == "New"


async def test_recorded_feedback_is_counted_by_kind_on_the_metrics_port(
    http: httpx.AsyncClient, service: Service, keys: Keys
) -> None:
    """SPEC C48: connectsoft.factory.learning.feedback, by kind, served on the
    metrics port, not the API's, and without tenant ids unless configured."""
    body = {"projectId": "p", "subjectKind": "run", "subjectRef": "r", "kind": "escalation"}
    for _ in range(2):
        posted = await http.post("/factory/feedback", json=body, headers=auth(keys.a))
        assert posted.status_code == 201
    listed = await http.get(
        "/factory/feedback", params={"minPosition": posted.json()["position"]}, headers=auth(keys.a)
    )
    tenant = listed.json()["items"][0]["tenantId"]
    assert (await http.get("/metrics")).status_code == 404
    metrics = (await http.get(service.metrics_url)).text
    assert 'connectsoft_factory_learning_feedback_total{kind="escalation",tenant=""} 2.0' in metrics
    assert tenant not in metrics


async def test_comments_and_corrections_are_stored_as_artifacts_and_referenced(
    http: httpx.AsyncClient, keys: Keys
) -> None:
    """SPEC C04, C06: text is kept as an artifact; feedback carries its reference."""
    text = b"The summary left out the second attachment."
    stored = await http.post(
        "/factory/artifacts", content=text, headers={**auth(keys.a), "Content-Type": "text/plain"}
    )
    assert stored.status_code == 201
    ref = stored.json()["ref"]
    again = await http.post("/factory/artifacts", content=text, headers=auth(keys.a))
    assert again.json()["ref"] == ref  # content-addressed
    read = await http.get(f"/factory/artifacts/{ref}", headers=auth(keys.a))
    assert read.content == text
    assert (await http.get(f"/factory/artifacts/{ref}", headers=auth(keys.b))).status_code == 404

    base = {"projectId": "p", "subjectKind": "artifact", "subjectRef": "doc-9"}
    kinds = [
        {**base, "kind": "rating", "rating": 3},
        {**base, "kind": "comment", "commentRef": ref},
        {**base, "kind": "correction", "correctedArtifactRef": ref},
        {**base, "kind": "escalation"},
    ]
    for body in kinds:
        response = await http.post("/factory/feedback", json=body, headers=auth(keys.a))
        assert response.status_code == 201, response.text
    made_up = {**base, "kind": "comment", "commentRef": "artifact:sha256:" + "0" * 64}
    refused = await http.post("/factory/feedback", json=made_up, headers=auth(keys.a))
    assert refused.status_code == 422
    assert refused.json()["field"] == "commentRef"
    listed = await http.get(
        "/factory/feedback",
        params={"subjectRef": "doc-9", "minPosition": response.json()["position"]},
        headers=auth(keys.a),
    )
    assert sorted(i["kind"] for i in listed.json()["items"]) == [
        "comment", "correction", "escalation", "rating",
    ]  # fmt: skip


async def test_a_reviewer_annotates_a_report_on_the_running_service(
    http: httpx.AsyncClient, keys: Keys, service: Service
) -> None:
    """Decisions D170–D173 on the real service: anna corrects alice's report, tags it and
    notes on it; alice reads both Kinds and the tag, not the note; a bad tag is a 422."""
    composed = await http.post(
        "/factory/reports/wrong-answer", json=SEED_FACTS, headers=auth(keys.a)
    )
    report_id = composed.json()["reportId"]
    await http.post(f"/factory/reports/{report_id}/submit", headers=auth(keys.a))
    base = f"/factory/reports/{report_id}"
    bad = await http.post(f"{base}/tags", json={"tag": "Not A Tag"}, headers=auth(keys.a_other))
    assert (bad.status_code, bad.json()["field"]) == (422, "tag"), bad.text
    corrected = await http.post(
        f"{base}/kind", json={"kind": "outdated"}, headers=auth(keys.a_other)
    )
    assert corrected.status_code == 200, corrected.text
    await http.post(f"{base}/tags", json={"tag": "stale-node"}, headers=auth(keys.a_other))
    noted = await http.post(f"{base}/notes", json={"note": "ask Ana"}, headers=auth(keys.a_other))
    assert noted.status_code == 200, noted.text
    at = {"minPosition": noted.json()["position"]}
    theirs = (await http.get(base, params=at, headers=auth(keys.a_other))).json()
    assert theirs["parsed"]["kind"] == "not-found"
    assert theirs["annotations"]["correction"]["kind"] == "outdated"
    assert theirs["annotations"]["correction"]["addressee"] == "content owner"
    assert theirs["annotations"]["tags"] == ["stale-node"]
    assert [note["words"] for note in theirs["annotations"]["notes"]] == ["ask Ana"]
    mine = (await http.get(base, params=at, headers=auth(keys.a))).json()
    assert mine["annotations"]["notes"] is None
    assert "ask Ana" not in json.dumps(mine)
