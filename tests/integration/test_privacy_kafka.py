"""What leaves for Kafka of a person (decisions D74), on real PostgreSQL and Kafka: a hand-over
carries its report's text by reference, feedback carries no giver; the words are read through
the API, which shows them as erased once the person is."""

import asyncio
import json
import uuid
from typing import Any

import httpx
import pytest

from contracts import topics
from services.processes.bootstrap import Runtime
from services.store.sealing import ERASED
from tests.conftest import Keys, client_for, settings_for
from tests.integration.test_privacy_erasure import key_of
from tests.kafka_peer import consume

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]


async def fetched(http: httpx.AsyncClient, path: str) -> dict[str, Any]:
    """The report at ``path``, as a subscriber reads it (once the Inbox has it)."""
    async with asyncio.timeout(60):
        while (answer := await http.get(path)).status_code == 404:
            await asyncio.sleep(0.05)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


async def test_a_persons_words_and_id_travel_on_kafka_only_as_references(
    database_url: str, kafka_bootstrap: str
) -> None:
    tenant = f"tenant-{uuid.uuid4().hex[:6]}"
    person, words = f"pat-{uuid.uuid4().hex[:8]}", f"zebra{uuid.uuid4().hex[:10]}"
    pat, pat_entry = key_of(tenant, person, ["Requester"])
    triage, triage_entry = key_of(tenant, "triage-bot", ["Reviewer"])
    admin, admin_entry = key_of(tenant, "root", ["PlatformAdmin"])
    entries = json.dumps([pat_entry, triage_entry, admin_entry])
    settings = settings_for(database_url, Keys("", "", "", "", "", entries), kafka_bootstrap)
    runtime = await Runtime.open(settings)
    try:
        runtime.start_projections()
        await runtime.start_relay()
        async with client_for(runtime, pat) as http:
            stored = await http.post("/factory/artifacts", content=f"comment {words}".encode())
            assert stored.status_code == 201, stored.text
            feedback = await http.post("/factory/feedback", json={
                "projectId": "p1", "subjectKind": "run", "subjectRef": "answer-1",
                "kind": "comment", "commentRef": stored.json()["ref"],
            }, headers={"Idempotency-Key": uuid.uuid4().hex})  # fmt: skip
            assert feedback.status_code in (200, 201), feedback.text
            drafted = await http.post("/factory/reports", json={
                "category": "bug", "message": f"message {words}",
                "extraContext": f"context {words}",
            })  # fmt: skip
            assert drafted.status_code == 201, drafted.text
            report_id = drafted.json()["reportId"]
            submitted = await http.post(f"/factory/reports/{report_id}/submit")
            assert submitted.json()["handedOver"] is True, submitted.text

        prefix = settings.topic_prefix
        (handed,) = await consume(kafka_bootstrap, prefix + topics.FEEDBACK_HANDED_OVER, 1)
        (recorded,) = await consume(kafka_bootstrap, prefix + topics.FEEDBACK_RECORDED, 1)
        for message in (handed, recorded):
            assert words.encode() not in message.value
            assert person.encode() not in message.value
        data = json.loads(handed.value)["data"]
        assert data["reportId"] == report_id
        assert data["reportPath"] == f"/factory/reports/{report_id}"
        assert "message" not in data
        assert "extraContext" not in data

        # The subscriber reads the words where the reference points, with its own key.
        async with client_for(runtime, triage) as http:
            report = await fetched(http, data["reportPath"])
            assert (report["message"], report["extraContext"]) == (
                f"message {words}", f"context {words}"
            )  # fmt: skip
        async with client_for(runtime, admin) as http:
            erased = await http.delete(f"/factory/people/{person}")
            assert erased.status_code == 200, erased.text
        # ...and, once the person is erased, reads them as erased.
        async with client_for(runtime, triage) as http:
            report = await fetched(http, data["reportPath"])
            assert (report["message"], report["extraContext"]) == (ERASED, ERASED)
    finally:
        await runtime.close()
