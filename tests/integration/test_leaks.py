"""No leaks across tenants and people, each shown over HTTP on a real PostgreSQL.

Tenant A's people are alice (``keys.a``) and anna (``keys.a_other``); bob (``keys.b``) is of
tenant B; ``keys.a_service`` is a service of tenant A.
"""

import socket
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any
from uuid import UUID, uuid4

import httpx
import pytest
from prometheus_client import generate_latest

from contracts.errors import Refused
from contracts.feedback import RecordFeedback
from services.bus.issued import Issued
from services.feedback.subscriptions import referenced_artifacts_exist
from services.processes.bootstrap import Runtime
from services.processes.metrics_port import serve_metrics
from services.store.event_store import EVENTS_TABLE
from services.store.owners import TENANTS_TABLE, ensure_tenants_table, owned
from tests.conftest import Keys, maintain, settings_for
from tests.unit.test_wrong_answer import SEED_FACTS


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture
async def client(runtime: Runtime) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=runtime.app())
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        yield http


async def store_artifact(client: httpx.AsyncClient, key: str, text: bytes) -> str:
    stored = await client.post("/factory/artifacts", content=text, headers=auth(key))
    assert stored.status_code == 201, stored.text
    ref: str = stored.json()["ref"]
    return ref


def comment(ref: str, field: str = "commentRef") -> dict[str, Any]:
    kind = "comment" if field == "commentRef" else "correction"
    return {"projectId": "p", "subjectKind": "run", "subjectRef": "r", "kind": kind, field: ref}


def spellings(ref: str) -> list[str]:
    digest = ref.removeprefix("artifact:sha256:")
    return [f"ARTIFACT:sha256:{digest}", f"artifact:SHA256:{digest}", f"Artifact:Sha256:{digest}"]


# --- Another tenant's artifact under another spelling of the scheme --------------------------


async def test_another_tenants_artifact_is_refused_in_any_spelling_of_the_scheme(
    client: httpx.AsyncClient, keys: Keys
) -> None:
    """SPEC C06, C08: scheme and algorithm are case-insensitive (RFC 3986),
    so ``ARTIFACT:sha256:`` and ``artifact:SHA256:`` are checked like ``artifact:sha256:``."""
    theirs = await store_artifact(client, keys.b, b"tenant B's private note")
    for field in ("commentRef", "correctedArtifactRef"):
        for ref in spellings(theirs):
            refused = await client.post(
                "/factory/feedback", json=comment(ref, field), headers=auth(keys.a)
            )
            assert refused.status_code == 422, (field, ref, refused.text)
            assert refused.json()["field"] == field
            assert "not an artifact of this tenant" in refused.json()["message"]


async def test_an_own_artifact_in_another_spelling_is_stored_in_the_normal_one(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    """The reference is stored normalised, whatever spelling was sent."""
    ours = await store_artifact(client, keys.a, b"a note of our own")
    upper = "ARTIFACT:SHA256:" + ours.removeprefix("artifact:sha256:").upper()
    recorded = await client.post("/factory/feedback", json=comment(upper), headers=auth(keys.a))
    assert recorded.status_code == 201, recorded.text
    stored = runtime.store.repository.get(UUID(recorded.json()["feedbackId"]))
    assert stored.comment_ref == ours
    read = await client.get(f"/factory/artifacts/{upper}", headers=auth(keys.a))
    assert read.status_code == 200
    assert read.content == b"a note of our own"


async def test_a_malformed_reference_in_our_scheme_is_refused_naming_the_field(
    client: httpx.AsyncClient, keys: Keys
) -> None:
    """``artifact:`` is ours; anything but sha256 and 64 hex digits is refused."""
    for ref in ("artifact:md5:abc", "ARTIFACT:sha256:xyz", "artifact:sha256:" + "a" * 63):
        refused = await client.post("/factory/feedback", json=comment(ref), headers=auth(keys.a))
        assert refused.status_code == 422, ref
        assert refused.json()["field"] == "commentRef"
    other_system = await client.post(
        "/factory/feedback", json=comment("s3://bucket/note.txt"), headers=auth(keys.a)
    )
    assert other_system.status_code == 201  # another system's reference, taken as it is (C08)


async def test_the_kafka_path_checks_every_spelling_of_the_scheme_too(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    """The inbound RecordFeedback's reference check (SPEC C06, C08)."""
    theirs = await store_artifact(client, keys.b, b"tenant B's private note")
    tenant_a = runtime.keys.identify(keys.a)
    assert tenant_a is not None
    for ref in spellings(theirs):
        command = RecordFeedback.model_validate(comment(ref))
        issued = Issued(command, tenant_a.tenant_id, "svc", "k1", datetime.now(UTC))
        with pytest.raises(Refused) as refused:
            await referenced_artifacts_exist(runtime.pool, issued)
        assert refused.value.field == "commentRef"


# --- /metrics apart from the API, without tenant ids unless configured ------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def record_rating(client: httpx.AsyncClient, key: str) -> None:
    body = {
        "projectId": "p",
        "subjectKind": "run",
        "subjectRef": "r",
        "kind": "rating",
        "rating": 4,
    }
    recorded = await client.post("/factory/feedback", json=body, headers=auth(key))
    assert recorded.status_code == 201, recorded.text


async def test_metrics_are_not_served_by_the_api(client: httpx.AsyncClient, keys: Keys) -> None:
    """Whoever reaches the API is not therefore an operator."""
    assert (await client.get("/metrics")).status_code == 404
    assert (await client.get("/metrics", headers=auth(keys.a))).status_code == 404


async def test_metrics_are_served_on_their_own_port_without_tenant_ids(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    """SPEC C48: the feedback counter by kind; the tenant label stays empty
    unless FEEDBACKLOOP_METRICS_TENANT_LABELS is set."""
    runtime.settings.metrics_port = free_port()
    port = runtime.metrics_served(serve_metrics(runtime.settings, runtime.role))
    await record_rating(client, keys.a)
    tenant = runtime.keys.identify(keys.a)
    assert tenant is not None
    async with httpx.AsyncClient() as scraper:
        scraped = await scraper.get(f"http://127.0.0.1:{port}/metrics")
    assert scraped.status_code == 200
    assert 'connectsoft_factory_learning_feedback_total{kind="rating",tenant=""}' in scraped.text
    assert tenant.tenant_id not in scraped.text


async def test_tenant_ids_are_labels_only_when_configured(database_url: str, keys: Keys) -> None:
    """An operator who wants per-tenant counts (C48's tenant dimension) asks."""
    settings = settings_for(database_url, keys).model_copy(update={"metrics_tenant_labels": True})
    runtime = await Runtime.open(settings)
    try:
        transport = httpx.ASGITransport(app=runtime.app())
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            await record_rating(client, keys.a)
        tenant = runtime.keys.identify(keys.a)
        assert tenant is not None
        assert f'kind="rating",tenant="{tenant.tenant_id}"' in generate_latest().decode()
    finally:
        await runtime.close()


async def test_a_metrics_port_that_is_taken_stops_the_process_naming_the_setting(
    runtime: Runtime,
) -> None:
    """Metrics an operator counts on must not go missing quietly; 0 is off."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        runtime.settings.metrics_port = taken.getsockname()[1]
        with pytest.raises(RuntimeError, match="FEEDBACKLOOP_METRICS_PORT"):
            serve_metrics(runtime.settings, runtime.role)
    runtime.settings.metrics_port = 0
    assert serve_metrics(runtime.settings, runtime.role) is None


# --- A draft is its author's until submitted --------------------------------------------------


async def draft(client: httpx.AsyncClient, key: str, message: str = "it said CHF 200") -> str:
    body = {"category": "answer", "message": message}
    drafted = await client.post("/factory/reports", json=body, headers=auth(key))
    assert drafted.status_code == 201, drafted.text
    report_id: str = drafted.json()["reportId"]
    return report_id


async def test_another_persons_draft_is_absent_on_read_submit_review_and_lift(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    """SPEC W27 (a draft is not a report until Submit): alice's draft is
    hers; to anna, of the same tenant, it answers 404 exactly as a report that is not there."""
    runtime.start_projections()
    report_id = await draft(client, keys.a)
    absent = str(uuid4())
    for rid in (report_id, absent):
        answers = [
            await client.get(f"/factory/reports/{rid}", headers=auth(keys.a_other)),
            await client.post(f"/factory/reports/{rid}/submit", headers=auth(keys.a_other)),
            await client.post(
                f"/factory/reports/{rid}/review",
                json={"status": "Triaged"},
                headers=auth(keys.a_other),
            ),
            await client.post(f"/factory/reports/{rid}/lift", headers=auth(keys.a_other)),
        ]
        assert [a.status_code for a in answers] == [404] * 4, [a.text for a in answers]
        assert {a.json()["error"] for a in answers} == {"not-found"}
    own = await client.get(f"/factory/reports/{report_id}", headers=auth(keys.a))
    assert own.status_code == 200  # the author previews it
    assert own.json()["status"] == "Draft"

    submitted = await client.post(f"/factory/reports/{report_id}/submit", headers=auth(keys.a))
    assert submitted.status_code == 200, submitted.text
    position = submitted.json()["position"]
    seen = await client.get(
        f"/factory/reports/{report_id}",
        params={"minPosition": position},
        headers=auth(keys.a_other),
    )
    assert seen.status_code == 200  # submitted: a report for the tenant's reviewers
    reviewed = await client.post(
        f"/factory/reports/{report_id}/review",
        json={"status": "Triaged"},
        headers=auth(keys.a_other),
    )
    assert reviewed.status_code == 200, reviewed.text
    assert reviewed.json()["status"] == "Triaged"


async def test_the_inbox_lists_submitted_reports_only_not_even_the_authors_drafts(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    """SPEC W27, W30: drafts are in nobody's Inbox."""
    runtime.start_projections()
    await draft(client, keys.a, "still a draft")
    submitted_id = await draft(client, keys.a, "submitted")
    submitted = await client.post(f"/factory/reports/{submitted_id}/submit", headers=auth(keys.a))
    position = submitted.json()["position"]
    for key in (keys.a, keys.a_other):
        inbox = await client.get(
            "/factory/reports/inbox", params={"minPosition": position}, headers=auth(key)
        )
        assert [i["reportId"] for i in inbox.json()["items"]] == [submitted_id]


# --- Only people confirm an eval case ---------------------------------------------------------


async def test_a_service_key_cannot_confirm_an_eval_case(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    """SPEC W74–W76: confirmedBy is a person, the one the nightly runs act
    as; a service's key is refused with 403, naming why, and nothing is confirmed. The
    service is named a maintainer here, so that the register lets it as far as that rule."""
    await maintain(client, keys.a, ("alice", "svc-nightly"))
    facts = {**SEED_FACTS, "prompt": "Welchen Stundenansatz verrechne ich?"}
    drafted = await client.post("/factory/reports/wrong-answer", json=facts, headers=auth(keys.a))
    report_id = drafted.json()["reportId"]
    await client.post(f"/factory/reports/{report_id}/submit", headers=auth(keys.a))
    lifted = await client.post(f"/factory/reports/{report_id}/lift", headers=auth(keys.a))
    assert lifted.status_code == 201, lifted.text
    case_id = lifted.json()["caseId"]

    by_service = await client.post(
        f"/factory/evals/cases/{case_id}/confirm",
        json={"confirmed": True},
        headers=auth(keys.a_service),
    )
    assert by_service.status_code == 403, by_service.text
    body = by_service.json()
    assert (body["error"], body["field"]) == ("not-permitted", "confirmedBy")
    assert "only a person may confirm" in body["message"]
    case = runtime.store.repository.get(UUID(case_id))
    assert case.confirmed_by is None  # nothing was stamped

    by_person = await client.post(
        f"/factory/evals/cases/{case_id}/confirm", json={"confirmed": True}, headers=auth(keys.a)
    )
    assert by_person.status_code == 200
    assert by_person.json()["confirmedBy"] == "alice"


# --- Artifacts are downloads, never in the uploader's Content-Type -----------------------------


async def test_an_artifact_is_served_as_a_plain_text_download_never_as_uploaded(
    client: httpx.AsyncClient, keys: Keys
) -> None:
    """SPEC C06 (artifacts hold people's text): an uploaded ``text/html``
    must not render (and run) in a reader's browser; the bytes come back unchanged."""
    page = b"<html><script>fetch('/factory/reports/inbox')</script></html>"
    stored = await client.post(
        "/factory/artifacts", content=page, headers={**auth(keys.a), "Content-Type": "text/html"}
    )
    read = await client.get(
        f"/factory/artifacts/{stored.json()['ref']}", headers=auth(keys.a_other)
    )
    assert read.status_code == 200
    assert read.content == page
    assert read.headers["content-type"] == "text/plain; charset=utf-8"
    assert read.headers["x-content-type-options"] == "nosniff"
    assert read.headers["content-disposition"] == "attachment"
    assert "sandbox" in read.headers["content-security-policy"]

    binary = b"\x89PNG\r\n\x1a\n\xff\xfe"
    stored = await client.post(
        "/factory/artifacts",
        content=binary,
        headers={**auth(keys.a), "Content-Type": "image/svg+xml"},
    )
    read = await client.get(f"/factory/artifacts/{stored.json()['ref']}", headers=auth(keys.a))
    assert read.content == binary
    assert read.headers["content-type"] == "application/octet-stream"
    assert read.headers["content-disposition"] == "attachment"


# --- Another tenant's id takes the same path as an id that does not exist -----------------------


async def test_another_tenants_id_is_refused_by_the_same_path_as_a_random_one(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC C51 (every write is scoped by tenant, and says nothing of another tenant's data):
    another tenant's existing id and a random id are refused alike, by one probe of the
    owners' table by (id, tenant) that finds nothing; neither reads a single event of the
    aggregate, so neither takes longer to refuse."""
    theirs = await draft(client, keys.b)
    await client.post(f"/factory/reports/{theirs}/submit", headers=auth(keys.b))
    reads: list[object] = []
    recorder = runtime.store.recorder
    real_select = recorder.select_events

    def counted(*args: Any, **kwargs: Any) -> Any:  # the real store, only counted
        reads.append(args)
        return real_select(*args, **kwargs)

    monkeypatch.setattr(recorder, "select_events", counted)
    answers = {}
    for name, rid in (("theirs", theirs), ("random", str(uuid4()))):
        submitted = await client.post(f"/factory/reports/{rid}/submit", headers=auth(keys.a))
        reviewed = await client.post(
            f"/factory/reports/{rid}/review", json={"status": "Triaged"}, headers=auth(keys.a)
        )
        answers[name] = [
            (r.status_code, r.json()["error"], r.json()["message"].replace(rid, "ID"))
            for r in (submitted, reviewed)
        ]
    assert answers["theirs"] == answers["random"] == [(404, "not-found", "no report ID")] * 2
    assert reads == []  # no event of either was read: the owners' table answered

    tenant_a, tenant_b = runtime.keys.identify(keys.a), runtime.keys.identify(keys.b)
    assert tenant_a is not None
    assert tenant_b is not None
    assert owned(runtime.store, tenant_b.tenant_id, UUID(theirs))
    assert not owned(runtime.store, tenant_a.tenant_id, UUID(theirs))


async def test_the_owners_table_is_filled_with_every_append_and_for_aggregates_stored_before(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    """The owners' table is written by the database in the transaction that
    appends an aggregate's first event, and on first start for a store that predates it."""
    report_id = UUID(await draft(client, keys.a))
    tenant = runtime.keys.identify(keys.a)
    assert tenant is not None
    assert owned(runtime.store, tenant.tenant_id, report_id)
    async with runtime.pool.acquire() as conn:  # as a store made before the owners' table
        await conn.execute(f"DROP TRIGGER feedbackloop_record_tenant ON {EVENTS_TABLE}")
        await conn.execute(f"DROP TABLE {TENANTS_TABLE}")
    ensure_tenants_table(runtime.store)
    assert owned(runtime.store, tenant.tenant_id, report_id)
    listed = await runtime.pool.fetchval(f"SELECT count(*) FROM {TENANTS_TABLE}")
    assert listed == 1  # the report only: nothing without a tenant is listed
