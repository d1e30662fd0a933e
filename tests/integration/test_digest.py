"""The weekly digest on a real PostgreSQL (and Kafka, for the neighbour): built once, posted
once, whatever runs it twice (SPEC W104–W138)."""

import asyncio
import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.message import Message
from typing import Any

import httpx
import pytest
from aiokafka.admin import AIOKafkaAdminClient
from eventsourcing.utils import get_topic

from contracts import topics
from contracts.evals import LiftEvalCase
from contracts.reports import ComposeWrongAnswer, DraftReport, SubmitReport
from contracts.weeks import due_at
from projections.digests import get_digest
from services.bus.issued import Issued
from services.digests.builder import DigestBuilder, NotCaughtUp
from services.digests.domain import NO_ROUTE, QUIET_WEEK, Digest, digest_id_for
from services.followers.waiting import wait_for_position
from services.processes.bootstrap import Runtime
from services.scheduling.orders import BuildDigest
from services.store.log_reading import read_log
from services.webhooks.signed import signature
from tests.conftest import Keys, settings_for
from tests.kafka_peer import consume
from tests.unit.test_wrong_answer import SEED_FACTS
from tests.webhook_endpoint import webhook_endpoint

WEEK = "2026-W47"  # Monday 2026-11-16 .. Monday 2026-11-23
MONDAY = datetime(2026, 11, 16, tzinfo=UTC)
ORDER = BuildDigest(week=WEEK, now=due_at(WEEK))
COACH = "AgenticOffice/Agent/OfficeCoach"
WRITER = "AgenticOffice/Agent/Writer"
SECRET = "digest-webhook-secret"


def tenant_of(keys: Keys) -> str:
    return str(json.loads(keys.entries)[0]["tenant"])


async def send(runtime: Runtime, tenant: str, command: Any, at: datetime) -> Any:
    key = uuid.uuid4().hex
    return (await runtime.bus.execute(Issued(command, tenant, "rita", key, at))).result


async def submit(
    runtime: Runtime, tenant: str, at: datetime, agent: str | None = COACH, model: str = "m1"
) -> uuid.UUID:
    """A submitted wrong-answer report of ``agent`` (None: a plain report, no block)."""
    if agent is None:
        command: Any = DraftReport(category="answer", message="that answer was wrong")
    else:
        reply = {**SEED_FACTS["reply"], "agentName": agent, "modelName": model}
        facts = {**SEED_FACTS, "reply": reply, "prompt": "What is my hourly rate?"}
        command = ComposeWrongAnswer.model_validate(facts)
    state = await send(runtime, tenant, command, at)
    await send(runtime, tenant, SubmitReport(report_id=state.report_id), at)
    return uuid.UUID(str(state.report_id))


def posts_in_store(runtime: Runtime) -> list[Any]:
    _, notes = read_log(runtime.store, 0, 10_000, [get_topic(Digest.AgentPosted)])
    return [runtime.store.mapper.to_domain_event(n) for n in notes]


def builts_in_store(runtime: Runtime) -> list[Any]:
    _, notes = read_log(runtime.store, 0, 10_000, [get_topic(Digest.Built)])
    return notes


async def digest_view(runtime: Runtime, tenant: str) -> dict[str, Any]:
    head = await asyncio.to_thread(runtime.store.recorder.max_notification_id) or 0
    assert await wait_for_position(runtime.pool, "rm_digests", head, 30) >= head
    found = await get_digest(runtime.pool, tenant, WEEK)
    assert found is not None
    return found


@pytest.fixture
async def live(runtime: Runtime) -> Runtime:
    """The runtime with its read models following the log, as ``serve`` runs them."""
    runtime.start_projections()
    return runtime


async def test_a_week_built_twice_is_one_digest_and_says_it_had_no_route(
    live: Runtime, keys: Keys
) -> None:
    """W109, W124, W128: the second build decides nothing; with no route nothing is sent."""
    tenant = tenant_of(keys)
    lifted = await submit(live, tenant, MONDAY + timedelta(days=1))
    await submit(live, tenant, MONDAY + timedelta(days=2), agent=WRITER, model="m2")
    await submit(live, tenant, MONDAY - timedelta(days=2))  # the week before: the trend
    await submit(live, tenant, MONDAY + timedelta(days=3), agent=None)  # W122
    draft = ComposeWrongAnswer.model_validate(SEED_FACTS)
    await send(live, tenant, draft, MONDAY + timedelta(days=3))  # W116: a draft is no report
    await send(live, tenant, LiftEvalCase(source=lifted), MONDAY + timedelta(days=4))

    builder = live.digest_builder()
    first = await builder.run(ORDER)
    second = await builder.run(ORDER)
    assert [b.digest.created for b in first] == [True]
    assert [b.digest.created for b in second] == [False]
    assert len(builts_in_store(live)) == 1
    assert posts_in_store(live) == []

    view = await digest_view(live, tenant)
    tables = view["tables"]
    assert tables["reports"] == 3
    agents = {a["agent"]: a for a in tables["agents"]}
    assert set(agents) == {COACH, WRITER, "(unknown agent)"}
    assert agents[COACH]["trend"] == {"previous": 1, "change": 0}
    assert len(agents[COACH]["casesLifted"]) == 1  # W119
    assert view["posted"]["note"] == NO_ROUTE
    assert view["posted"]["identities"] == []


async def test_two_builders_at_once_make_one_digest_and_one_post_per_agent(
    live: Runtime, database_url: str, keys: Keys
) -> None:
    """W109, W124: two processes (two runtimes, two pools, two buses) on one store."""
    tenant = tenant_of(keys)
    for n in range(3):
        await submit(live, tenant, MONDAY + timedelta(hours=n), agent=(COACH, WRITER)[n % 2])
    other = await Runtime.open(settings_for(database_url, keys))
    try:
        builders = [
            DigestBuilder(
                rt.store, rt.bus, rt.pool, instance="urn:fl", routes=lambda _: ["kafka:x"]
            )
            for rt in (live, other)
        ]
        results = await asyncio.gather(*(b.run(ORDER) for b in builders))
    finally:
        await other.close()
    created = [built.digest.created for result in results for built in result]
    assert sorted(created) == [False, True]
    assert len(builts_in_store(live)) == 1
    posts = posts_in_store(live)
    assert sorted(p.agent for p in posts) == [COACH, WRITER]
    view = await digest_view(live, tenant)
    assert sorted(view["posted"]["identities"]) == sorted(p.feedback_path for p in posts)
    assert view["posted"]["routes"] == ["kafka:x"]


async def test_a_quiet_week_writes_the_digest_and_posts_nothing(live: Runtime, keys: Keys) -> None:
    """W127: a tenant with reports, none of them this week."""
    tenant = tenant_of(keys)
    await submit(live, tenant, MONDAY - timedelta(days=30))
    builder = DigestBuilder(
        live.store, live.bus, live.pool, instance="urn:fl", routes=lambda _: ["k"]
    )
    await builder.run(ORDER)
    assert posts_in_store(live) == []
    view = await digest_view(live, tenant)
    assert view["tables"]["reports"] == 0
    assert view["posted"]["note"] == QUIET_WEEK
    assert view["posted"]["postedAt"] is not None


async def test_a_full_page_is_recorded_as_truncated(live: Runtime, keys: Keys) -> None:
    """W112: the bound is a lower bound said out loud (FEEDBACKLOOP_DIGEST_PAGE_BOUND)."""
    tenant = tenant_of(keys)
    for n in range(4):
        await submit(live, tenant, MONDAY + timedelta(hours=n))
    builder = DigestBuilder(
        live.store, live.bus, live.pool, instance="i", routes=lambda _: [], page_bound=3
    )
    await builder.run(ORDER)
    tables = (await digest_view(live, tenant))["tables"]
    assert tables["truncated"] is True
    assert (tables["reports"], tables["bound"]) == (3, 3)


async def test_the_builder_waits_for_the_read_models_and_fails_loudly_behind(
    runtime: Runtime, keys: Keys
) -> None:
    """Reading a read model behind the store would count less than was submitted."""
    await submit(runtime, tenant_of(keys), MONDAY)
    builder = DigestBuilder(
        runtime.store,
        runtime.bus,
        runtime.pool,
        instance="i",
        routes=lambda _: [],
        wait_seconds=0.5,
    )
    with pytest.raises(NotCaughtUp):
        await builder.run(ORDER)
    assert builts_in_store(runtime) == []


async def test_a_week_is_not_built_before_it_is_due(live: Runtime) -> None:
    """W106: Monday 06:00 UTC after the week, not a second earlier."""
    early = BuildDigest(week=WEEK, now=due_at(WEEK) - timedelta(seconds=1))
    with pytest.raises(ValueError, match="not due"):
        await live.digest_builder().run(early)


async def test_the_digests_api_lists_weeks_and_shows_one_within_the_tenant(
    live: Runtime, keys: Keys
) -> None:
    """W137: every week newest first, one week with its tables and what was posted."""
    tenant = tenant_of(keys)
    await submit(live, tenant, MONDAY)
    await live.digest_builder().run(ORDER)
    await live.digest_builder().run(BuildDigest(week="2026-W48", now=due_at("2026-W48")))
    await digest_view(live, tenant)
    transport = httpx.ASGITransport(app=live.app(), raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:

        async def get(path: str, key: str) -> httpx.Response:
            return await http.get(path, headers={"Authorization": f"Bearer {key}"})

        listed = await get("/factory/feedback/digests", keys.a_read_only)
        assert listed.status_code == 200, listed.text
        assert [d["week"] for d in listed.json()["items"]] == ["2026-W48", WEEK]
        one = await get(f"/factory/feedback/digests/{WEEK}", keys.a)
        assert one.status_code == 200, one.text
        assert one.json()["tables"]["agents"][0]["agent"] == COACH
        assert one.json()["posted"]["note"] == NO_ROUTE
        assert (await get(f"/factory/feedback/digests/{WEEK}", keys.b)).status_code == 404
        assert (await get("/factory/feedback/digests", keys.b)).json()["items"] == []
        assert (await get("/factory/feedback/digests", keys.a_no_scope)).status_code == 403
        assert (await get("/factory/feedback/digests/2026-48", keys.a)).status_code == 422
        document = (await http.get("/openapi.json")).json()
        assert "/factory/feedback/digests/{week}" in document["paths"]


async def test_a_neighbour_reads_digest_posted_with_the_twelve_previous_ids(
    kafka_runtime: Runtime, keys: Keys, kafka_bootstrap: str
) -> None:
    """W123, W125, W126, W129, W130 over a real broker, read with plain aiokafka."""
    runtime = kafka_runtime
    tenant = tenant_of(keys)
    runtime.start_projections()
    await runtime.start_relay()
    week = "2027-W02"  # the previous twelve cross 2026-W53
    await submit(runtime, tenant, datetime(2027, 1, 12, 9, tzinfo=UTC))
    await submit(runtime, tenant, datetime(2027, 1, 13, 9, tzinfo=UTC), agent=WRITER)
    runtime.settings = runtime.settings.model_copy(
        update={"public_url": "https://feedback.example.org/"}
    )
    await runtime.digest_builder().run(BuildDigest(week=week, now=due_at(week)))
    topic = runtime.settings.topic_prefix + topics.DIGEST_POSTED
    records = await consume(kafka_bootstrap, topic, count=2)
    assert len(records) == 2
    events = sorted((json.loads(r.value) for r in records), key=lambda e: e["data"]["agent"])
    data = events[0]["data"]
    source = events[0]["source"]
    assert data["event"] == "digest"
    assert data["agent"] == COACH
    path = "_Digests/2027-W02/AgenticOffice_Agent_OfficeCoach"
    assert data["feedbackPath"] == path
    assert data["itemId"] == f"{source}/{path}"
    assert data["url"] == "https://feedback.example.org/factory/feedback/digests/2027-W02"
    assert data["previousItems"] == [
        f"{source}/_Digests/{w}/AgenticOffice_Agent_OfficeCoach"
        for w in ["2027-W01", "2026-W53", "2026-W52", "2026-W51", "2026-W50", "2026-W49",
                  "2026-W48", "2026-W47", "2026-W46", "2026-W45", "2026-W44", "2026-W43"]
    ]  # fmt: skip
    assert json.loads(data["extraContext"])["agent"] == COACH
    assert events[0]["subject"] == str(digest_id_for(tenant, week))
    assert events[0]["type"] == "evaluation.feedback.v2.DigestPosted"
    assert data["health"] == json.loads(data["extraContext"])["health"]  # D53 on v2 (D151)
    view = await get_digest(runtime.pool, tenant, week)
    assert view is not None
    assert view["posted"]["routes"] == [f"kafka:{topic}"]
    # The v1 topic is retired (D151): the relay neither creates it nor publishes on it.
    retired = runtime.settings.topic_prefix + "evaluation.feedback.v1.digest-posted"
    assert topic == runtime.settings.topic_prefix + "evaluation.feedback.v2.digest-posted"
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    await admin.start()
    try:
        existing = set(await admin.list_topics())
    finally:
        await admin.close()
    assert topic in existing
    assert retired not in existing


@pytest.fixture
def triage() -> Iterator[tuple[str, list[tuple[bool, dict[str, Any]]]]]:
    """A real local webhook endpoint standing in for engineering triage: keeps each body and
    whether its signature verified."""
    received: list[tuple[bool, dict[str, Any]]] = []

    def answer(body: bytes, headers: Message) -> int:
        received.append(
            (headers.get("X-Feedbackloop-Signature") == signature(SECRET, body), json.loads(body))
        )
        return 200

    with webhook_endpoint(answer) as url:
        yield f"{url}/hand-overs", received


async def test_posts_go_to_the_hand_over_webhook_too_signed_as_hand_overs_are(
    database_url: str, keys: Keys, triage: tuple[str, list[tuple[bool, dict[str, Any]]]]
) -> None:
    """W123: the same route the hand-over uses; the body is the topic's CloudEvent, signed
    the same way, and each delivery is recorded on the digest."""
    url, received = triage
    update = {"handover_webhook_url": url, "handover_webhook_secret": SECRET}
    runtime = await Runtime.open(settings_for(database_url, keys).model_copy(update=update))
    try:
        tenant = tenant_of(keys)
        runtime.start_projections()
        assert runtime.start_handover_webhook() is not None  # the digest's posts go along
        await submit(runtime, tenant, MONDAY)
        await submit(runtime, tenant, MONDAY, agent=WRITER)
        await runtime.digest_builder().run(ORDER)
        view: dict[str, Any] | None = None
        async with asyncio.timeout(30):
            while not (view and len(view["posted"]["deliveries"]) == 2):
                await asyncio.sleep(0.1)
                view = await get_digest(runtime.pool, tenant, WEEK)
        assert view["posted"]["routes"] == [f"webhook:{url}"]
        assert set(view["posted"]["deliveries"].values()) == {"delivered"}
        assert [signed for signed, _ in received] == [True, True]
        assert {event["type"] for _, event in received} == {"evaluation.feedback.v2.DigestPosted"}
        assert sorted(event["data"]["agent"] for _, event in received) == [COACH, WRITER]
    finally:
        await runtime.close()
