"""Learning proposals on a real PostgreSQL: the generator raises once per evidence, waits for
its drafter, supersedes, and the API refuses what C33–C35 refuse (SPEC C26–C53)."""

import asyncio
import contextlib
import uuid
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from eventsourcing.utils import get_topic
from prometheus_client import REGISTRY

from contracts.feedback import RecordFeedback
from contracts.neighbours import EvaluationCompleted
from projections.learning_proposals import get_proposal
from services.bus.issued import Issued
from services.followers.waiting import wait_for_position
from services.kafka.inbound.parsing import identity
from services.learning.domain import LearningProposal
from services.learning.evidence import Evidence
from services.learning.generator import NotCaughtUp, ProposalGenerator, RunReport
from services.learning.settings import LearningSettings
from services.processes import scheduled
from services.processes.bootstrap import Runtime
from services.processes.read_model_gauges import refresh
from services.scheduling.orders import RaiseProposals
from services.store.artifacts import get_artifact
from services.store.event_store import EVENTS_TABLE
from tests.conftest import Keys, event_count, maintain, settings_for
from tests.integration.test_digest import submit, tenant_of
from tests.standin import free_port, standin_agent

DAY = date(2026, 11, 30)
NOW = datetime(2026, 11, 30, 6, tzinfo=UTC)
ORDER = RaiseProposals(DAY, NOW)
AGENT = "agent-42"


def failed_evaluation(n: int, target: str = AGENT) -> EvaluationCompleted:
    return EvaluationCompleted.model_validate(
        {
            "evaluationId": f"ev-{n}",
            "targetAssetId": target,
            "targetVersion": "v7",
            "passed": False,
            "gates": [
                {
                    "name": "grounded",
                    "passed": False,
                    "metric": "groundedness",
                    "value": 0.5,
                    "threshold": 0.8,
                }
            ],
            "completedAt": (NOW - timedelta(hours=n)).isoformat(),
        }
    )


async def neighbour(runtime: Runtime, tenant: str, event: Any, cloudevent_id: str) -> Any:
    """A neighbour's event as the inbound consumer hands it to the bus (its identity)."""
    issued = Issued(
        event,
        tenant,
        "urn:quality",
        f"ce/urn:quality/{cloudevent_id}",
        NOW,
        identity=identity(tenant, "urn:quality", cloudevent_id),
    )
    return (await runtime.bus.execute(issued)).result


async def stored_count(runtime: Runtime, event: type) -> int:
    count = await runtime.pool.fetchval(
        f"SELECT count(*) FROM {EVENTS_TABLE} WHERE topic = $1", get_topic(event)
    )
    return int(count)


def generator(runtime: Runtime, env: dict[str, str] | None = None) -> ProposalGenerator:
    """The generator reads the evidence clusters read model, which ``live`` runs."""
    return ProposalGenerator(
        runtime.store,
        runtime.bus,
        runtime.pool,
        settings=lambda: LearningSettings.from_environ(env or {}),
    )


async def visible(runtime: Runtime) -> None:
    head = await asyncio.to_thread(runtime.store.recorder.max_notification_id) or 0
    assert await wait_for_position(runtime.pool, "rm_learning_proposals", head, 30) >= head


@pytest.fixture
async def live(runtime: Runtime) -> Runtime:
    runtime.start_projections(["learning_proposals"])
    return runtime


async def test_three_failed_evaluations_raise_one_proposal_however_often_it_runs(
    live: Runtime, keys: Keys
) -> None:
    """C39, C43: run twice, then replay the same neighbour events (again, and under other
    CloudEvent ids): still one proposal, and no evidence recorded twice."""
    tenant = tenant_of(keys)
    for n in range(2):
        await neighbour(live, tenant, failed_evaluation(n), f"ce-{n}")
    gen = generator(live)
    assert (await gen.run(ORDER)).raised == []  # C29: two items wait for a third
    await neighbour(live, tenant, failed_evaluation(2), "ce-2")
    first = await gen.run(ORDER)
    second = await gen.run(ORDER)
    assert len(first.raised) == 1
    # C43: the raised proposal stands on exactly that evidence: the cluster is not ready again
    assert (second.raised, second.existing) == ([], [])
    for n in range(3):  # the replay: same CloudEvents, then the same facts under new ids
        await neighbour(live, tenant, failed_evaluation(n), f"ce-{n}")
        await neighbour(live, tenant, failed_evaluation(n), f"replayed-{n}")
    assert await stored_count(live, Evidence.Recorded) == 3
    assert (await gen.run(ORDER)).raised == []
    # A second scheduler at the same time: both name the same proposal, the bus creates it once.
    other = await Runtime.open(live.settings)
    try:
        await asyncio.gather(gen.run(ORDER), generator(other).run(ORDER))
    finally:
        await other.close()
    assert await stored_count(live, LearningProposal.Raised) == 1
    proposal: LearningProposal = live.store.repository.get(first.raised[0])
    assert (proposal.kind, proposal.target_asset_id, proposal.target_version) == (
        "prompt-improvement",
        AGENT,
        "v7",
    )
    assert sorted(proposal.evidence_refs) == [f"evaluation:ev-{n}" for n in range(3)]
    media_type, summary = await get_artifact(live.pool, tenant, proposal.summary_ref)  # C06
    assert media_type.startswith("text/markdown")
    assert "| evaluation:ev-0 | failed-evaluation |" in summary.decode()


async def test_min_evidence_items_changed_in_the_operator_s_file_takes_effect_while_running(
    live: Runtime, keys: Keys, tmp_path: Path
) -> None:
    """C47: reloadable for real (decisions D152). The generator as the scheduler builds it,
    in a process already running; the operator edits the reloadable settings file on disk
    (not the environment, not a dict in the process): the next run reads it. A passing
    evaluation is no evidence (C39)."""
    tenant = tenant_of(keys)
    await neighbour(live, tenant, failed_evaluation(0), "a")
    passing = failed_evaluation(1).model_copy(update={"passed": True, "gates": []})
    await neighbour(live, tenant, passing, "b")
    file = tmp_path / "reloadable.env"
    file.write_text("# the operator's\nFEEDBACKLOOP_LEARNING_MIN_EVIDENCE_ITEMS=3\n")
    live.settings = live.settings.model_copy(update={"reloadable_settings_file": file})
    gen: ProposalGenerator = scheduled.carried_out_by(live.given(), RaiseProposals)
    assert (await gen.run(ORDER)).raised == []  # one item of evidence, three needed
    file.write_text("FEEDBACKLOOP_LEARNING_MIN_EVIDENCE_ITEMS=1\n")  # while it runs
    report = await gen.run(ORDER)
    assert len(report.raised) == 1
    proposal: LearningProposal = live.store.repository.get(report.raised[0])
    assert proposal.evidence_refs == ["evaluation:ev-0"]


@contextlib.contextmanager
def model_endpoint(port: int, tmp_path: Path) -> Iterator[str]:
    """An OpenAI-compatible stand-in (``services.evals.standin``) on ``port``."""
    with standin_agent(
        {"default": {"text": "Grounding fails on agent-42."}}, tmp_path, port
    ) as url:
        yield url


async def test_while_the_model_drafter_is_down_evidence_waits_and_is_raised_once_it_is_up(
    live: Runtime, keys: Keys, tmp_path: Path
) -> None:
    """C45: connection refused → nothing raised, nothing stored; up → raised at the next run."""
    tenant = tenant_of(keys)
    for n in range(3):
        await neighbour(live, tenant, failed_evaluation(n), f"ce-{n}")
    port = free_port()
    env = {
        "FEEDBACKLOOP_LEARNING_PROPOSAL_PROFILE": "model",
        "FEEDBACKLOOP_LEARNING_MODEL_URL": f"http://127.0.0.1:{port}",
        "FEEDBACKLOOP_LEARNING_MODEL_NAME": "drafter-1",
        "FEEDBACKLOOP_LEARNING_MODEL_TIMEOUT_SECONDS": "5",
    }
    gen = generator(live, env)
    before = await event_count(live)
    down: RunReport = await gen.run(ORDER)
    assert (down.raised, down.waiting) == ([], [f"{tenant}/{AGENT}"])
    assert down.unavailable is not None
    assert "ConnectError" in down.unavailable
    assert await event_count(live) == before
    with model_endpoint(port, tmp_path):
        up = await gen.run(ORDER)
    assert len(up.raised) == 1
    assert up.unavailable is None
    proposal: LearningProposal = live.store.repository.get(up.raised[0])
    assert proposal.profile == "model"
    _, summary = await get_artifact(live.pool, tenant, proposal.summary_ref)
    assert "Grounding fails on agent-42." in summary.decode()
    assert proposal.expected_effect == {
        "metric": "groundedness",
        "from": 0.5,
        "to": 0.8,
        "confidence": 0.75,
    }


async def test_wrong_answer_reports_on_an_agent_are_a_feedback_cluster(
    live: Runtime, keys: Keys
) -> None:
    """C28, C42: three submitted reports on one agent raise a proposal on that agent."""
    live.start_projections(["inbox", "eval_cases", "feedback_list"])
    tenant = tenant_of(keys)
    coach = "AgenticOffice/Agent/OfficeCoach"
    for n in range(3):
        await submit(live, tenant, NOW - timedelta(days=n), agent=coach)
    head = await asyncio.to_thread(live.store.recorder.max_notification_id) or 0
    assert await wait_for_position(live.pool, "rm_inbox", head, 30) >= head
    report = await generator(live).run(ORDER)
    assert len(report.raised) == 1
    proposal: LearningProposal = live.store.repository.get(report.raised[0])
    assert proposal.target_asset_id == "AgenticOffice_Agent_OfficeCoach"
    assert all(ref.startswith("report:") for ref in proposal.evidence_refs)


async def test_a_low_rating_on_an_evaluation_counts_on_the_evaluation_s_target(
    live: Runtime, keys: Keys
) -> None:
    """C28: feedback given on an evaluation we saw (even a passing one) is evidence on its
    target asset; feedback on a subject we cannot tie to an asset is not read."""
    live.start_projections(["inbox", "eval_cases", "feedback_list"])
    tenant = tenant_of(keys)
    passing = failed_evaluation(9).model_copy(update={"passed": True, "gates": []})
    await neighbour(live, tenant, passing, "ce-9")
    for n in range(2):
        await neighbour(live, tenant, failed_evaluation(n), f"ce-{n}")
    for subject_kind, ref in (("evaluation", "ev-9"), ("run", "run-1"), ("evaluation", "nope")):
        rating = RecordFeedback.model_validate(
            {"projectId": "p", "subjectKind": subject_kind, "subjectRef": ref,
             "kind": "rating", "rating": 1}
        )  # fmt: skip
        await live.bus.execute(Issued(rating, tenant, "rita", uuid.uuid4().hex, NOW))
    head = await asyncio.to_thread(live.store.recorder.max_notification_id) or 0
    assert await wait_for_position(live.pool, "rm_feedback_list", head, 30) >= head
    report = await generator(live).run(ORDER)
    assert len(report.raised) == 1
    proposal: LearningProposal = live.store.repository.get(report.raised[0])
    assert proposal.target_asset_id == AGENT
    kinds = sorted(ref.split(":")[0] for ref in proposal.evidence_refs)
    assert kinds == ["evaluation", "evaluation", "feedback"]


async def test_feedback_is_not_read_from_a_read_model_that_lags(
    runtime: Runtime, keys: Keys
) -> None:
    """A lagging read model would raise a proposal on part of a cluster: the order fails and
    is given again (no read model follows the log here); nothing was raised."""
    for n in range(3):
        await neighbour(runtime, tenant_of(keys), failed_evaluation(n), f"ce-{n}")
    lagging = generator(runtime)
    lagging.wait_seconds = 0.5
    with pytest.raises(NotCaughtUp, match="rm_learning_proposals is at 0"):
        await lagging.run(ORDER)
    assert await stored_count(runtime, LearningProposal.Raised) == 0


async def raise_on(runtime: Runtime, tenant: str, first: int, count: int = 3) -> uuid.UUID:
    for n in range(first, first + count):
        await neighbour(runtime, tenant, failed_evaluation(n), f"ce-{n}")
    report = await generator(runtime).run(ORDER)
    assert len(report.raised) == 1
    return report.raised[0]


async def proposals_in(runtime: Runtime, state: str, kind: str = "prompt-improvement") -> float:
    """SPEC C49 as Prometheus shows it once recomputed from the read model (tenant ids are not
    label values by default)."""
    await visible(runtime)
    await refresh(runtime.pool)
    labels = {"tenant": "", "kind": kind, "state": state}
    return REGISTRY.get_sample_value("connectsoft_factory_learning_proposals", labels) or 0.0


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def test_the_api_picks_up_decides_and_refuses_what_the_state_machine_refuses(
    live: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    tenant = tenant_of(keys)
    await maintain(client, keys.a, agent=AGENT)  # alice decides as its maintainer (D77)
    older = await raise_on(live, tenant, 0)
    newer = await raise_on(live, tenant, 3, count=1)  # new evidence: supersedes (C34)
    await visible(live)
    listed = (await client.get("/factory/learning/proposals")).json()["items"]
    assert [(p["proposalId"], p["state"]) for p in listed] == [
        (str(newer), "Proposed"),  # four items before three (C36's order)
        (str(older), "Superseded"),
    ]
    assert listed[0]["expectedEffect"]["metric"] == "groundedness"
    assert len(listed[0]["evidence"]) == 4
    only = await client.get("/factory/learning/proposals", params={"state": "Superseded"})
    assert [p["proposalId"] for p in only.json()["items"]] == [str(older)]
    by_kind = await client.get("/factory/learning/proposals", params={"kind": "skill-improvement"})
    assert by_kind.json()["items"] == []
    by_target = await client.get("/factory/learning/proposals", params={"target": "nope"})
    assert by_target.json()["items"] == []

    # Refused: a decision on a Superseded proposal, naming both states (C34).
    refused = await client.post(f"/factory/learning/proposals/{older}/pick-up")
    assert refused.status_code == 409
    assert (refused.json()["current"], refused.json()["requested"]) == ("Superseded", "InReview")
    decided = await client.post(
        f"/factory/learning/proposals/{older}/decide", json={"decision": "accept"}
    )
    assert decided.status_code == 409
    assert (decided.json()["current"], decided.json()["requested"]) == ("Superseded", "Accepted")
    # Another tenant's key: as absent as a missing one (C51); a key without the scope: 403.
    other = await client.get(f"/factory/learning/proposals/{newer}", headers=auth(keys.b))
    assert other.status_code == 404
    other_pick = await client.post(
        f"/factory/learning/proposals/{newer}/pick-up", headers=auth(keys.b)
    )
    assert other_pick.status_code == 404
    no_scope = await client.post(
        f"/factory/learning/proposals/{newer}/pick-up", headers=auth(keys.a_no_scope)
    )
    assert no_scope.status_code == 403
    assert (
        await client.get("/factory/learning/proposals", headers=auth(keys.a_read_only))
    ).status_code == 403

    picked = await client.post(f"/factory/learning/proposals/{newer}/pick-up")
    assert picked.status_code == 200
    assert (picked.json()["state"], picked.json()["reviewedBy"]) == ("InReview", "alice")
    before = await event_count(live)
    no_reason = await client.post(
        f"/factory/learning/proposals/{newer}/decide", json={"decision": "reject"}
    )
    assert (no_reason.status_code, no_reason.json()["field"]) == (422, "reason")  # C33
    stamped = await client.post(
        f"/factory/learning/proposals/{newer}/decide",
        json={"decision": "accept", "reviewedBy": "mallory"},
    )
    assert (stamped.status_code, stamped.json()["field"]) == (422, "reviewedBy")
    assert await event_count(live) == before
    rejected = await client.post(
        f"/factory/learning/proposals/{newer}/decide",
        json={"decision": "reject", "reason": "the gate's threshold is what is wrong"},
    )
    assert rejected.json()["state"] == "Rejected"
    view = await client.get(
        f"/factory/learning/proposals/{newer}",
        params={"minPosition": rejected.json()["position"]},
    )
    assert view.json()["reason"] == "the gate's threshold is what is wrong"
    assert view.json()["decidedAt"] is not None


async def test_accepting_waits_for_the_release_id_until_the_registry_answers(
    live: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    """C32, C53: accepted → DraftReleaseRequested; the proposal says it waits, InReview until
    the release exists (C34, decisions D54); the callback records the release id once and
    makes it Accepted. C49: the count, read from the read model, follows each change."""
    proposal_id = await raise_on(live, tenant_of(keys), 0)
    assert await proposals_in(live, "Proposed") == 1
    await maintain(client, keys.a, agent=AGENT)
    await client.post(f"/factory/learning/proposals/{proposal_id}/pick-up")
    accepted = await client.post(
        f"/factory/learning/proposals/{proposal_id}/decide", json={"decision": "accept"}
    )
    assert accepted.json()["state"] == "InReview"
    assert await stored_count(live, LearningProposal.DraftReleaseRequested) == 1
    again = await client.post(
        f"/factory/learning/proposals/{proposal_id}/decide", json={"decision": "accept"}
    )
    assert again.status_code == 200  # C35: natural idempotency, nothing appended
    assert {state: await proposals_in(live, state) for state in ("InReview", "Accepted")} == {
        "InReview": 1,  # counted once, the repeat counted nothing
        "Accepted": 0,
    }
    assert await stored_count(live, LearningProposal.DraftReleaseRequested) == 1
    await visible(live)
    waiting = await get_proposal(live.pool, tenant_of(keys), proposal_id)
    assert waiting is not None
    assert waiting["waitingForRelease"] is True
    released = await client.post(
        f"/factory/learning/proposals/{proposal_id}/release", json={"releaseId": "rel-9"}
    )
    assert released.json()["resultingReleaseId"] == "rel-9"
    assert released.json()["state"] == "Accepted"
    conflicting = await client.post(
        f"/factory/learning/proposals/{proposal_id}/release", json={"releaseId": "rel-10"}
    )
    assert conflicting.status_code == 409
    await visible(live)
    done = await get_proposal(live.pool, tenant_of(keys), proposal_id)
    assert done is not None
    assert (done["resultingReleaseId"], done["waitingForRelease"]) == ("rel-9", False)


async def test_a_second_runtime_sees_the_first_ones_proposals(
    database_url: str, keys: Keys
) -> None:
    """The generator waits for the evidence clusters to reach the store's head: another process
    (whose read model follows the same log) raises nothing new."""
    first = await Runtime.open(settings_for(database_url, keys))
    try:
        first.start_projections(["learning_proposals"])
        await raise_on(first, tenant_of(keys), 0)
    finally:
        await first.close()
    second = await Runtime.open(settings_for(database_url, keys))
    try:
        second.start_projections(["learning_proposals"])
        report = await generator(second).run(ORDER)
        assert (report.raised, report.failed) == ([], [])
    finally:
        await second.close()


CHARTER = """
[[line]]
id = "grounded-answers"
text = "Answers rest on what the agent looked up."

[[line]]
id = "fast-replies"
text = "Replies come while the asker still waits."
"""


async def test_proposals_tied_on_evidence_are_ranked_by_the_charter_line_they_serve(
    live: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    """SPEC M21: most evidence first; among ties, the proposal whose evidence
    serves the higher line of the tenant's charter; by raisedAt while there is no charter.
    A ``charter:`` reference to a line the charter lacks counts for none (M19)."""
    tenant = tenant_of(keys)

    async def raised(first: int, agent: str, serves: list[str]) -> str:
        for n in range(first, first + 3):
            event = failed_evaluation(n, target=agent).model_copy(update={"serves": serves})
            await neighbour(live, tenant, event, f"ce-{n}")
        report = await generator(live).run(ORDER)
        assert len(report.raised) == 1
        return str(report.raised[0])

    fast = await raised(0, "agent-fast", ["charter:fast-replies", "task:T-1"])
    grounded = await raised(10, "agent-grounded", ["charter:grounded-answers"])
    unknown = await raised(20, "agent-other", ["charter:no-such-line", "not a ref"])
    await visible(live)

    def order(answer: httpx.Response) -> list[tuple[str, str | None]]:
        assert answer.status_code == 200, answer.text
        return [(p["proposalId"], p["charterLine"]) for p in answer.json()["items"]]

    before = await client.get("/factory/learning/proposals")
    # By raisedAt, then by id: the three were raised at one instant (ORDER's), so their id
    # decides, which keeps a page's place in the list stable.
    assert order(before) == [(proposal, None) for proposal in sorted([fast, grounded, unknown])]

    live.start_projections(["appraisal"])  # where the charter is read from
    written = await client.put(
        "/factory/appraisal/charter", content=CHARTER, headers={"Content-Type": "text/plain"}
    )
    assert written.status_code == 200, written.text
    head = await asyncio.to_thread(live.store.recorder.max_notification_id) or 0
    assert await wait_for_position(live.pool, "rm_appraisal", head, 30) >= head
    after = await client.get("/factory/learning/proposals")
    assert order(after) == [
        (grounded, "grounded-answers"),  # the first line: first among the ties
        (fast, "fast-replies"),
        (unknown, None),  # serves no line the charter has
    ]
    one = (await client.get(f"/factory/learning/proposals/{grounded}")).json()
    assert one["charterLine"] == "grounded-answers"
    assert one["evidence"][0]["serves"] == ["charter:grounded-answers"]
