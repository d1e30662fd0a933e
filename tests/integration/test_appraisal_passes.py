"""The paid passes (SPEC M42–M44) on a real PostgreSQL, through the agent client eval runs use,
against the stand-in agent over real HTTP: with no model nothing is asked or recorded and the
report says so; with one, numbers only are recorded on the ``appraisal`` channel, and each pass
stops at its cap."""

import asyncio
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from eventsourcing.utils import get_topic

from contracts.appraisal_records import RecordPassResults
from projections.appraisal import AppraisalFacts
from services.appraisal import passes
from services.appraisal.charter import EMPTY
from services.appraisal.pass_records import PaidPass
from services.appraisal.reads import Scope, read_facts
from services.appraisal.scan import chosen, readouts
from services.bus.issued import Issued
from services.evals.agents import HttpAgentClient, OpenAIChatClient
from services.processes.bootstrap import Runtime
from services.projecting.live import ProjectionRunner
from services.store.event_store import EVENTS_TABLE
from tests.conftest import Keys, event_count
from tests.standin import standin_agent

AT = datetime.now(UTC) - timedelta(hours=1)
SCRIPT = {
    "modelName": "standin-1",
    "rules": [
        {"when": "intervention opinion", "text": "mattered"},
        # the first appraisal reply is malformed: one retry, still one call against the cap
        {"when": "quarantined appraisal",
         "replies": [{"text": "I think it went badly"},
                     {"text": '{"sign": -0.5, "agency": "world", "visible": false}'}]},
    ],
    "default": {"text": "?"},
}  # fmt: skip


@pytest.fixture(scope="module")
def standin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with standin_agent(SCRIPT, tmp_path_factory.mktemp("standin")) as url:
        yield url


def run_completed(run_id: str) -> bytes:
    data = {"runId": run_id, "agentId": "coach", "outcome": "succeeded", "inputRef": "urn:in:1",
            "completedAt": AT.isoformat(), "counters": {},
            "stops": [{"stopId": f"stop-{run_id}"}],
            "questions": [{"questionId": f"q-{run_id}", "status": "abandoned"}]}  # fmt: skip
    event = {"specversion": "1.0", "id": run_id, "source": "urn:run-control",
             "type": "factory.runs.v1.RunCompleted", "data": data}  # fmt: skip
    return json.dumps(event).encode()


async def two_runs(runtime: Runtime, client: httpx.AsyncClient, tenant: str) -> list[Any]:
    for run_id in ("run-1", "run-2"):
        answer = await client.post(
            "/factory/events",
            content=run_completed(run_id),
            headers={"Content-Type": "application/cloudevents+json"},
        )
        assert answer.status_code == 201, answer.text  # fmt: skip
    await caught_up(runtime)
    facts = await read_facts(runtime.pool, tenant, Scope())
    runs, _ = chosen(facts, None, False)
    return [passes.RunToPass(r.run.run_id, r.errors) for r in readouts(facts, runs, EMPTY, AT)]


async def caught_up(runtime: Runtime) -> None:
    runner = ProjectionRunner(runtime.store, runtime.pool, AppraisalFacts())
    await runner.start()
    await runner.catch_up()


def recorder(runtime: Runtime, tenant: str) -> passes.Record:
    async def record(command: RecordPassResults) -> object:
        return await runtime.bus.execute(Issued(command, tenant, "cli", command.run_id, AT))

    return record


def tenant_of(keys: Keys) -> str:
    return str(json.loads(keys.entries)[0]["tenant"])


@pytest.mark.parametrize(
    "client",
    [None, OpenAIChatClient("http://127.0.0.1:9", api_key=None, model=None)],
    ids=["no-agent", "no-model"],
)
async def test_a_paid_pass_with_no_model_asks_nothing_records_nothing_and_says_so(
    runtime: Runtime, client: Any, keys: Keys
) -> None:
    tenant = tenant_of(keys)
    runs = [passes.RunToPass("run-1", ())]
    before = await event_count(runtime)
    for run_pass in (passes.ask_intervention_opinions, passes.appraiser):
        report = await run_pass(runs, client, None, 5, recorder(runtime, tenant))
        assert not report.ran
        assert report.calls == 0
        assert "no model configured" in report.said
        assert "nothing recorded" in report.said
    assert await event_count(runtime) == before


async def test_an_intervention_opinion_is_recorded_and_changes_no_label(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys, standin: str
) -> None:
    """D153: asked with the run id and the intervention alone (no transcript, no replay), the
    model's "mattered" is recorded and counted, and stops at its cap; it does not fill
    ``controllable`` (M26), so the run still reads distress, not regret (M44 needs a replay).
    An older record of the same words under ``probe`` flips nothing either."""
    tenant = tenant_of(keys)
    runs = await two_runs(runtime, client, tenant)
    agent = HttpAgentClient(standin)
    before = (await client.get("/factory/appraisal/runs/run-1")).json()
    report = await passes.ask_intervention_opinions(runs, agent, None, 1, recorder(runtime, tenant))
    assert (report.calls, report.recorded_runs, report.left_at_cap) == (1, 1, 1)
    # the stop was asked about (mattered); the abandoned question is not asked about: skipped
    assert dict(report.counts) == {"mattered": 1, "skipped": 1}
    assert "no label changed" in report.said
    stored = await runtime.pool.fetch(
        f"SELECT state FROM {EVENTS_TABLE} WHERE topic = $1", get_topic(PaidPass.Recorded)
    )
    assert [json.loads(bytes(r["state"]))["kind"] for r in stored] == ["opinion"]
    said = [{"cite": "stop-run-2", "result": "mattered"}]
    older = PaidPass.record(
        tenant_id=tenant, run_id="run-2", kind="probe", model="m", results=said, at=AT
    )
    await asyncio.to_thread(runtime.store.save, older)
    await caught_up(runtime)
    for run_id in ("run-1", "run-2"):
        run = (await client.get(f"/factory/appraisal/runs/{run_id}")).json()
        stop = next(o for o in run["outcomes"] if o["cite"] == f"stop-{run_id}")
        assert stop["controllable"] is None  # M26: only a replay fills it
        assert run["label"] == "distress"  # M44 unrefined: the free readout's word
    assert before["label"] == "distress"


async def test_the_appraiser_records_numbers_only_on_the_appraisal_channel(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys, standin: str
) -> None:
    tenant = tenant_of(keys)
    runs = await two_runs(runtime, client, tenant)
    agent = HttpAgentClient(standin)
    report = await passes.appraiser(runs, agent, None, 1, recorder(runtime, tenant))
    assert (report.calls, report.recorded_runs, report.left_at_cap) == (1, 1, 1)
    assert dict(report.counts) == {"found": 1}
    stored = await runtime.pool.fetch(
        f"SELECT state FROM {EVENTS_TABLE} WHERE topic = $1", get_topic(PaidPass.Recorded)
    )
    assert len(stored) == 1
    payload = json.loads(bytes(stored[0]["state"]))
    (result,) = payload["results"]
    assert set(result) == {"cite", "result", "sign", "agency", "visible"}  # no text
    assert "went badly" not in json.dumps(payload)
    await caught_up(runtime)
    run = (await client.get("/factory/appraisal/runs/run-1")).json()
    said = [o for o in run["outcomes"] if o["channel"] == "appraisal"]
    assert said == [{"goal": None, "channel": "appraisal", "sign": -0.5, "agency": "world",
                     "visible": False, "controllable": None, "cite": "appraiser",
                     "outcome": "appraiser"}]  # fmt: skip
    # M36: the appraiser put it down to the world: anger, which at an equal −0.5 says more
    # than the abandoned question's distress (M39); the other run, past the cap, is free
    assert run["label"] == "anger"
    assert (await client.get("/factory/appraisal/runs/run-2")).json()["label"] == "distress"
    again = await passes.appraiser(runs[:1], agent, None, 5, recorder(runtime, tenant))
    assert again.recorded_runs == 1  # asked again: the pass is recorded once per run
    assert len(await runtime.pool.fetch(
        f"SELECT 1 FROM {EVENTS_TABLE} WHERE topic = $1", get_topic(PaidPass.Recorded)
    )) == 1  # fmt: skip
