"""Appraisal on a real PostgreSQL: the charter API, and a run's appraisal derived on
read from recorded feedback, reports and RunCompleted — replayed under a changed table."""

import json
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from contracts.appraisal import MAX_CHARTER_DOCUMENT
from contracts.feedback import FeedbackKind, RecordFeedback, SubjectKind
from contracts.neighbours import RunCompleted
from contracts.reports import DraftReport, SubmitReport
from projections.appraisal import AppraisalFacts
from projections.inbox import Inbox
from services.appraisal.api import appraisal_routes
from services.appraisal.outcomes import CONTRIBUTIONS, Agency, Channel, Contribution
from services.bus.issued import Issued
from services.edge.app import create_app
from services.edge.http import Http
from services.evals.domain import EvalCase
from services.evals.lift import Definition
from services.processes.bootstrap import Runtime
from services.projecting.live import ProjectionRunner
from services.projecting.rebuild import rebuild
from tests.appraisal_runs import HarvestedRun, record_run
from tests.conftest import Keys, event_count

NOW = datetime.now(UTC)
CHARTER = """
[[line]]
id = "grounded"
text = "Answers rest on sources the asker can read."

[[line]]
id = "inbox-short"
text = "Nobody's report waits long."
sensor = { kind = "request_closure", setpoint = "2d" }

[[line]]
id = "proposals"
text = "Proposals get a decision."
sensor = { kind = "question_latency", setpoint = "1w" }

[[line]]
id = "evals"
text = "Eval cases pass."
sensor = { kind = "intervention_rate", setpoint = "20%" }
"""


def facts_model() -> AppraisalFacts:
    return AppraisalFacts(run_events=(HarvestedRun.Recorded,))


async def caught_up(runtime: Runtime) -> None:
    for projection in (facts_model(), Inbox()):
        runner = ProjectionRunner(runtime.store, runtime.pool, projection)
        await runner.start()
        await runner.catch_up()


def tenant_of(keys: Keys) -> str:
    return str(json.loads(keys.entries)[0]["tenant"])


async def put(client: httpx.AsyncClient, document: str, key: str | None = None) -> httpx.Response:
    headers = {"Content-Type": "application/toml"}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    return await client.put("/factory/appraisal/charter", content=document, headers=headers)


async def test_a_person_writes_the_charter_and_reads_it_back_with_readings(
    runtime: Runtime, client: httpx.AsyncClient
) -> None:
    answer = await put(client, CHARTER)
    assert answer.status_code == 200, answer.text
    assert answer.json()["lines"] == 4
    await caught_up(runtime)
    got = (await client.get("/factory/appraisal/charter")).json()
    assert got["document"] == CHARTER
    assert [line["id"] for line in got["lines"]] == [
        "grounded",
        "inbox-short",
        "proposals",
        "evals",
    ]
    assert got["lines"][0]["sensor"] is None
    states = {line["id"]: line["sensor"]["state"] for line in got["lines"][1:]}
    assert states == {
        "inbox-short": "nothing-waiting",  # M20: an empty Inbox, not "0 within"
        "proposals": "unreadable",  # no run has reported its agent's questions: not zero
        "evals": "too-little-evidence",
    }
    assert all(line["sensor"]["within"] is None for line in got["lines"][1:])
    await runtime.pool.execute("DROP SCHEMA rm_inbox CASCADE")
    gone = (await client.get("/factory/appraisal/charter")).json()
    assert gone["lines"][1]["sensor"]["state"] == "unreadable"  # M16, M20: never zero
    assert gone["lines"][1]["sensor"]["value"] is None


async def test_a_service_key_may_not_write_the_charter(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    before = await event_count(runtime)
    answer = await put(client, CHARTER, keys.a_service)
    assert answer.status_code == 403
    assert answer.json()["field"] == "writtenBy"
    assert await event_count(runtime) == before


async def test_a_key_without_assets_write_may_not_write_the_charter(
    client: httpx.AsyncClient, keys: Keys
) -> None:
    answer = await put(client, CHARTER, keys.a_no_scope)
    assert answer.status_code == 403
    assert answer.json()["scope"] == "factory.assets.write"


async def test_a_refused_charter_names_the_line_and_stores_nothing(
    runtime: Runtime, client: httpx.AsyncClient
) -> None:
    before = await event_count(runtime)
    bad = CHARTER + '\n[[line]]\nid = "late"\ntext = "x"\npriority = 3\n'
    answer = await put(client, bad)
    assert answer.status_code == 422
    body = answer.json()
    assert body["line"] == 5
    assert body["lineId"] == "late"
    assert body["field"] == "line[5].priority"
    assert await event_count(runtime) == before


async def test_a_charter_over_its_bound_is_413_too_large_and_stores_nothing(
    runtime: Runtime, client: httpx.AsyncClient
) -> None:
    """As any body over its bound (services/edge/bodies.py ``bounded_body``): 413, not refused."""
    before = await event_count(runtime)
    padded = CHARTER + "#" * (MAX_CHARTER_DOCUMENT - len(CHARTER.encode()) + 1)
    answer = await put(client, padded)
    assert answer.status_code == 413, answer.text
    body = answer.json()
    assert (body["error"], body["field"]) == ("too-large", "body")
    assert await event_count(runtime) == before
    at_the_bound = await put(client, padded[:-1])
    assert at_the_bound.status_code == 200, at_the_bound.text


async def test_another_tenant_sees_its_own_empty_charter(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    assert (await put(client, CHARTER)).status_code == 200
    await caught_up(runtime)
    theirs = await client.get(
        "/factory/appraisal/charter", headers={"Authorization": f"Bearer {keys.b}"}
    )
    assert theirs.status_code == 200
    assert theirs.json()["lines"] == []


# ---- End to end: a run's appraisal, derived on read -----------------------------------------


async def send(runtime: Runtime, tenant: str, command: Any, at: datetime) -> Any:
    issued = Issued(command, tenant, "rita", uuid.uuid4().hex, at)
    return (await runtime.bus.execute(issued)).result


async def a_troubled_run(runtime: Runtime, tenant: str, run_id: str) -> None:
    """A run of the coach, corrected, escalated and reported as not-found."""
    at = NOW - timedelta(hours=1)
    record_run(
        runtime.store,
        tenant,
        RunCompleted.model_validate(
            {
                "runId": run_id,
                "agentId": "coach",
                "outcome": "succeeded",
                "inputRef": "in-1",
                "completedAt": at.isoformat(),
                "counters": {"stepMeasured": 2, "stepNulls": 0},
            }
        ),
        at,
    )
    for kind, extra in [
        (FeedbackKind.correction, {"correctedArtifactRef": "s3://fixed/1"}),
        (FeedbackKind.escalation, {}),
    ]:
        command = RecordFeedback.model_validate(
            {"projectId": "p", "subjectKind": SubjectKind.run, "subjectRef": run_id,
             "kind": kind, **extra}
        )  # fmt: skip
        await send(runtime, tenant, command, at)
    # A free-text report that names the kind and the run's thread but not the reply the
    # reporter read: its reach is not known, so it is not counted as visible (M25).
    block = f"Kind: not-found\nThread: {run_id}\nAgent: coach"
    draft = DraftReport(category="answer", message="It could not find my rate", extraContext=block)
    state = await send(runtime, tenant, draft, at)
    await send(runtime, tenant, SubmitReport(reportId=state.report_id), at)


async def test_a_corrected_escalated_and_reported_run_reads_distress(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    tenant = tenant_of(keys)
    await a_troubled_run(runtime, tenant, "run-42")
    await caught_up(runtime)
    body = (await client.get("/factory/appraisal/runs/run-42")).json()
    assert body["label"] == "distress"  # M37: self/owner errors that reached nobody
    assert body["valence"] == {"positive": 0.0, "negative": 3.0, "shown": "\u22123.0"}
    assert sorted(o["outcome"] for o in body["outcomes"]) == [
        "correction", "escalation", "report-not-found",
    ]  # fmt: skip
    assert all(o["cite"] for o in body["outcomes"])  # M27: each cites an id
    assert body["partial"] is False
    assert body["sources"]["unreadable"] == 0
    agent = (await client.get("/factory/appraisal/agents/coach")).json()
    assert agent["label"] == "distress"
    assert agent["health"]["stepNulls"] == {"rate": 0.0, "runs": 0, "eligible": 1, "unknown": 0}
    other = await client.get(
        "/factory/appraisal/runs/run-42", headers={"Authorization": f"Bearer {keys.b}"}
    )
    assert other.json()["outcomes"] == []  # another tenant's run is not visible


async def test_an_unreadable_store_marks_the_reading_partial_never_zero(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    await a_troubled_run(runtime, tenant_of(keys), "run-7")
    await caught_up(runtime)
    await runtime.pool.execute("ALTER TABLE rm_appraisal.feedback RENAME TO feedback_gone")
    body = (await client.get("/factory/appraisal/runs/run-7")).json()
    assert body["partial"] is True  # M34
    assert body["sources"]["unreadableNames"] == ["feedback"]
    assert body["valence"]["negative"] == 1.0  # what was read, marked partial


@pytest.fixture
async def harsher_client(runtime: Runtime, keys: Keys) -> AsyncIterator[httpx.AsyncClient]:
    """The same service reading with a changed contribution table: a correction now −2.0,
    put down to the world (the source it was given), and an escalation worth nothing."""
    table = dict(CONTRIBUTIONS)
    table["correction"] = Contribution(Channel.edit, -2.0, Agency.world)
    del table["escalation"]
    http = Http(runtime.bus, runtime.pool, runtime.keys, 5, runtime.positions)
    app = create_app(http, [appraisal_routes(http, table)])
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    headers = {"Authorization": f"Bearer {keys.a}"}
    async with httpx.AsyncClient(transport=transport, base_url="http://t", headers=headers) as c:
        yield c


async def test_a_changed_table_rereads_every_past_run_without_a_migration(
    runtime: Runtime, client: httpx.AsyncClient, harsher_client: httpx.AsyncClient, keys: Keys
) -> None:
    tenant = tenant_of(keys)
    for run_id in ("run-a", "run-b"):
        await a_troubled_run(runtime, tenant, run_id)
    await caught_up(runtime)
    before = {
        r: (await client.get(f"/factory/appraisal/runs/{r}")).json() for r in ("run-a", "run-b")
    }
    # The same history, replayed into a fresh read model (nothing migrated, nothing stored
    # but facts), read under the changed table.
    await rebuild(runtime.store, runtime.pool, facts_model())
    for run_id in ("run-a", "run-b"):
        old, new = (
            before[run_id],
            (await harsher_client.get(f"/factory/appraisal/runs/{run_id}")).json(),
        )
        assert old["valence"]["shown"] == "\u22123.0"
        assert new["valence"]["shown"] == "\u22123.0"  # −2.0 correction, −1.0 report
        assert sorted(o["outcome"] for o in new["outcomes"]) == ["correction", "report-not-found"]
        # M42: the free readout names it distress; the world's agency is the paid
        # appraiser's to read (M36), not the table's to label
        assert new["label"] == "distress"
        assert [o["sign"] for o in new["outcomes"] if o["outcome"] == "correction"] == [-2.0]
    rows = await runtime.pool.fetch("SELECT * FROM rm_appraisal.feedback ORDER BY feedback_id")
    assert all("sign" not in dict(row) and "label" not in dict(row) for row in rows)


async def test_a_malformed_goal_reference_from_a_client_is_refused_naming_it(
    runtime: Runtime, client: httpx.AsyncClient
) -> None:
    before = await event_count(runtime)
    body = {"projectId": "p", "subjectKind": "run", "subjectRef": "r", "kind": "rating",
            "rating": 5, "serves": ["charter:grounded", "wish:x"]}  # fmt: skip
    answer = await client.post("/factory/feedback", json=body)
    assert answer.status_code == 422  # M04, M05
    assert answer.json()["field"] == "serves.1"
    report = {"category": "answer", "message": "m", "serves": ["task"]}
    refused = await client.post("/factory/reports", json=report)
    assert refused.status_code == 422
    assert refused.json()["field"] == "serves.0"
    assert await event_count(runtime) == before


async def test_a_top_rated_reply_serving_a_charter_line_reads_pride(
    runtime: Runtime, client: httpx.AsyncClient
) -> None:
    assert (await put(client, CHARTER)).status_code == 200
    body = {"projectId": "p", "subjectKind": "run", "subjectRef": "run-p", "kind": "rating",
            "rating": 5, "serves": [" charter : grounded "]}  # fmt: skip
    assert (await client.post("/factory/feedback", json=body)).status_code == 201
    other = {**body, "subjectRef": "run-q", "serves": ["charter:no-such-line"]}
    assert (await client.post("/factory/feedback", json=other)).status_code == 201
    await caught_up(runtime)
    run = (await client.get("/factory/appraisal/runs/run-p")).json()
    assert run["label"] == "pride"  # M38: a delivery against a line the charter has
    assert run["outcomes"][0]["goal"] == "charter:grounded"
    assert run["valence"]["shown"] == "+1.0"
    assert (await client.get("/factory/appraisal/runs/run-q")).json()["label"] == "neutral"  # M19
    line = (await client.get("/factory/appraisal/lines/grounded")).json()
    assert line["label"] == "pride"
    assert [o["cite"] for o in line["outcomes"]] == [run["outcomes"][0]["cite"]]
    assert (await client.get("/factory/appraisal/lines/nope")).status_code == 404


def eval_case_run(tenant: str, passed: bool, invented: bool, at: datetime) -> EvalCase:
    """An eval case of the coach with one recorded run (the summary as the pass rule writes it)."""
    case = EvalCase.create(
        case_id=uuid.uuid4(), tenant_id=tenant, source=uuid.uuid4(), agent_path="coach", at=at
    )
    case.lift(Definition("coach", "What is my rate?", [], [], ["CHF 90"], None), at=at)
    summary = {"runs": 1, "scored": 1, "not_invented": 0 if invented else 1, "passed": passed}
    case.record_run(
        run_id=uuid.uuid4(), ran_by="alice", model=None, effort="low", threads=[],
        summary=summary, at=at,
    )  # fmt: skip
    return case


async def test_the_live_read_model_serves_the_charter_and_eval_runs_by_agent(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    tenant = tenant_of(keys)
    at = NOW - timedelta(days=1)
    runtime.store.save(eval_case_run(tenant, passed=False, invented=True, at=at))
    runtime.store.save(eval_case_run(tenant, passed=True, invented=False, at=at))
    runtime.start_projections(["appraisal"])  # as `serve` runs it (bootstrap's read models)
    written = (await put(client, CHARTER)).json()
    charter = await client.get(
        "/factory/appraisal/charter", params={"minPosition": written["position"]}
    )
    assert charter.json()["lines"][0]["id"] == "grounded"
    evals = charter.json()["lines"][3]["sensor"]
    assert evals["state"] == "too-little-evidence"  # two runs are too few for a rate (M20)
    agent = (await client.get("/factory/appraisal/agents/coach")).json()
    assert sorted(o["outcome"] for o in agent["outcomes"]) == ["eval-invented", "eval-passed"]
    assert all(o["goal"] is None for o in agent["outcomes"])  # M18: no sensor watches evals
    assert agent["valence"]["shown"] == "+0.5 \u22121.0"  # M41: never netted to −0.5
    assert agent["label"] == "distress"  # M40: mixed evidence follows the negative
    since = (NOW - timedelta(hours=1)).isoformat()
    later = (await client.get("/factory/appraisal/agents/coach", params={"since": since})).json()
    assert later["outcomes"] == []  # the window leaves the day-old runs out
    line = (await client.get("/factory/appraisal/lines/evals")).json()
    assert line["reading"]["state"] == "too-little-evidence"
    assert line["outcomes"] == []


# An offset that takes the instant past year 9999 (or before year 1) in UTC: no instant
# PostgreSQL can be sent, so the parameter is invalid (it read as every source unreadable).
PAST_UTC = [
    ("until", "9999-12-31T23:59:59.999999-23:59"),
    ("since", "0001-01-01T00:00:00+23:59"),
]


@pytest.mark.parametrize(("name", "value"), PAST_UTC)
@pytest.mark.parametrize(
    "path", ["/factory/appraisal/agents/Org%2FAgent%2FCoach", "/factory/appraisal/lines/evals"]
)
async def test_a_window_end_outside_utc_years_is_422_naming_it(
    runtime: Runtime, client: httpx.AsyncClient, path: str, name: str, value: str
) -> None:
    assert (await put(client, CHARTER)).status_code == 200
    await caught_up(runtime)
    answer = await client.get(path, params={name: value})
    assert answer.status_code == 422, answer.text
    body = answer.json()
    assert (body["error"], body["field"]) == ("invalid", name)
    assert [p["field"] for p in body["problems"]] == [name]


@pytest.mark.parametrize(
    "path", ["/factory/appraisal/agents/coach", "/factory/appraisal/lines/evals"]
)
async def test_a_window_that_ends_before_it_starts_is_422_naming_since(
    runtime: Runtime, client: httpx.AsyncClient, path: str
) -> None:
    """No M rule speaks of the window (SPEC 4C): a reversed one is a mistake to name, not an
    empty appraisal; an empty one (``since == until``) and the widest are answered."""
    assert (await put(client, CHARTER)).status_code == 200
    await caught_up(runtime)
    since, until = NOW.isoformat(), (NOW - timedelta(seconds=1)).isoformat()
    answer = await client.get(path, params={"since": since, "until": until})
    assert answer.status_code == 422, answer.text
    body = answer.json()
    assert (body["error"], body["field"]) == ("invalid", "since")
    assert [p["field"] for p in body["problems"]] == ["since"]
    empty = await client.get(path, params={"since": since, "until": since})
    assert empty.status_code == 200, empty.text  # [since, since): empty, as written
    assert empty.json()["partial"] is False
    edges = {"since": "0001-01-01T00:00:00Z", "until": "9999-12-31T23:59:59.999999Z"}
    widest = await client.get(path, params=edges)
    assert widest.status_code == 200, widest.text
    assert widest.json()["partial"] is False
