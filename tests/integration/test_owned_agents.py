"""What waits for an agent's maintainers (decisions D250–D256), against real PostgreSQL:
``GET /factory/owners/agents`` answers a maintainer for their own agents only, a PlatformAdmin
for every agent of the tenant, another tenant nothing, every other role 403; it holds the open
reports addressed to the agent's owner, its cases failing in the last night (run by the
nightly runner with an agent that faults), the proposals waiting (raised by the generator
from failed evaluations) and its webhook's health (a real receiver that answers 503)."""

import json
import uuid
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from contracts.agent import AgentReply, AgentRequest
from contracts.neighbours import EvaluationCompleted
from services.bus.issued import Issued
from services.evals.runs import CaseRunner
from services.kafka.inbound.parsing import identity
from services.learning.generator import ProposalGenerator
from services.learning.settings import LearningSettings
from services.nightly.runner import NightlyRunner
from services.nightly.settings import NightlySettings
from services.processes.bootstrap import Runtime
from services.scheduling.orders import PlanNight, RaiseProposals
from tests.conftest import client_for, event_count, settings_for
from tests.integration.test_access_cli import feedbackloop
from tests.integration.test_agent_webhooks import until
from tests.integration.test_role_rules import (
    RoleKeys,
    auth,
    filed_at,
    keys,  # noqa: F401  (the fixture)
    refused_for_role,
    registered,
)
from tests.unit.test_wrong_answer import SEED_FACTS
from tests.webhook_endpoint import webhook_endpoint

M, A, R, V = "AssetMaintainer", "PlatformAdmin", "Requester", "Reviewer"
COACH, WRITER = "owned-coach", "owned-writer"
READ_MODELS = ["access", "inbox", "eval_cases", "nights", "learning_proposals"]
OWNED = "/factory/owners/agents"


async def overview(http: httpx.AsyncClient, key: str, at: str | None = None) -> dict[str, Any]:
    params = {"minPosition": at} if at else {}
    answer = await http.get(OWNED, params=params, headers=auth(key))
    assert answer.status_code == 200, answer.text
    found: dict[str, Any] = answer.json()
    return found


def by_agent(found: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {item["agent"]: item for item in found["items"]}


async def test_a_maintainer_reads_their_own_agents_an_admin_all_another_tenant_none(
    database_url: str,
    keys: RoleKeys,  # noqa: F811
) -> None:
    update = {"agent_webhook_backoff_seconds": 0.2, "agent_webhook_max_attempts": 2}
    runtime = await Runtime.open(settings_for(database_url, keys).model_copy(update=update))
    try:
        runtime.start_projections(READ_MODELS)
        runtime.start_agent_webhooks()
        with webhook_endpoint(lambda body, headers: 503) as failing_url:
            async with client_for(runtime, keys.by_role[A]) as http:
                await owned_agents_read(runtime, http, keys, failing_url)
    finally:
        await runtime.close()


async def owned_agents_read(
    runtime: Runtime,
    http: httpx.AsyncClient,
    keys: RoleKeys,  # noqa: F811
    failing_url: str,
) -> None:
    admin, mia, max_ = keys.by_role[A], keys.by_role[M], keys.second[M]
    assert (await registered(http, admin, COACH, ["assetmaintainer-1"])).is_success
    assert (await registered(http, admin, WRITER, ["assetmaintainer-2"])).is_success
    hooked = await http.put(f"/factory/agents/{COACH}/webhook", json={"url": f"{failing_url}/in"},
                            headers=auth(mia))  # fmt: skip
    assert hooked.status_code == 200, hooked.text
    coach_report, _ = await filed_at(http, keys.by_role[R], COACH)
    writer_report, at = await filed_at(http, keys.by_role[R], WRITER)

    # D250: the register's maintainer sees their agent, and only theirs.
    mine = by_agent(await overview(http, mia, at))
    assert list(mine) == [COACH]
    coach = mine[COACH]
    assert coach["maintainers"] == ["assetmaintainer-1"]
    assert coach["reports"]["open"] == 1  # D251: not-found is addressed to the agent's owner
    [report] = coach["reports"]["items"]
    assert (report["reportId"], report["kind"], report["status"]) == (
        coach_report, "not-found", "New",
    )  # fmt: skip
    assert report["message"] == SEED_FACTS["account"]
    assert coach["night"] is None  # no night yet
    assert coach["proposals"] == {"waiting": 0, "items": []}
    theirs = by_agent(await overview(http, max_))
    assert list(theirs) == [WRITER]
    assert theirs[WRITER]["reports"]["items"][0]["reportId"] == writer_report
    assert theirs[WRITER]["webhook"] is None
    # A PlatformAdmin reads every agent of the tenant; tenant B's admin none of tenant A's.
    assert list(by_agent(await overview(http, admin))) == [COACH, WRITER]
    assert (await overview(http, keys.admin_b))["items"] == []

    # D255: the webhook's health, as its own GET says it: failing once its receiver fails.
    async def failing() -> bool:
        return bool(by_agent(await overview(http, mia))[COACH]["webhook"]["failing"])

    await until(failing)
    hook = by_agent(await overview(http, mia))[COACH]["webhook"]
    assert (hook["url"], hook["lastError"]) == (f"{failing_url}/in", "HTTP 503")

    # D251: a triaged report is still open; one a reviewer closed is not.
    review = f"/factory/reports/{coach_report}/review"
    triaged = await http.post(review, json={"status": "Triaged"}, headers=auth(keys.by_role[V]))
    assert triaged.status_code == 200, triaged.text
    still = by_agent(await overview(http, mia, triaged.json()["position"]))[COACH]["reports"]
    assert (still["open"], still["items"][0]["status"]) == (1, "Triaged")
    closed = await http.post(f"/factory/reports/{coach_report}/review",
                             json={"status": "WontFix", "reason": "works as meant"},
                             headers=auth(keys.by_role[V]))  # fmt: skip
    assert closed.status_code == 200, closed.text
    after = by_agent(await overview(http, mia, closed.json()["position"]))
    assert after[COACH]["reports"] == {"open": 0, "items": []}

    # Every other role is refused, naming the roles that read (D250), and audited.
    for role in ("Observer", R, V, "Operator"):
        refused = await http.get(OWNED, headers=auth(keys.by_role[role]))
        refused_for_role(refused, {M, A})

    # Bad input: 422 naming the field, nothing recorded.
    before = await event_count(runtime)
    for params, field in (({"limit": "0"}, "limit"), ({"limit": "x"}, "limit"),
                          ({"before": "not-a-cursor"}, "before"),
                          ({"minPosition": "nope"}, "minPosition")):  # fmt: skip
        bad = await http.get(OWNED, params=params, headers=auth(mia))
        assert bad.status_code == 422, (params, bad.text)
        assert bad.json()["field"] == field, bad.json()
    other_list = (await http.get("/factory/agents", params={"limit": 1},
                                 headers=auth(admin))).json()["next"]  # fmt: skip
    foreign = await http.get(OWNED, params={"before": other_list}, headers=auth(admin))
    assert foreign.status_code == 422, foreign.text
    assert foreign.json()["field"] == "before"
    assert await event_count(runtime) == before


class Faulting:
    """An agent whose every conversation faults: the night's line says ``failed`` (W103)."""

    needs_model = False

    async def reply(self, request: AgentRequest) -> AgentReply:
        raise RuntimeError("agent exploded")


def failed_evaluation(n: int) -> EvaluationCompleted:
    return EvaluationCompleted.model_validate(
        {
            "evaluationId": f"ev-owned-{n}",
            "targetAssetId": COACH,
            "targetVersion": "v1",
            "passed": False,
            "gates": [{"name": "grounded", "passed": False, "metric": "groundedness",
                       "value": 0.5, "threshold": 0.8}],
            "completedAt": (datetime.now(UTC) - timedelta(hours=n + 1)).isoformat(),
        }
    )  # fmt: skip


async def test_a_failing_case_of_last_night_and_a_waiting_proposal_are_the_maintainer_s(
    runtime: Runtime,
    keys: RoleKeys,  # noqa: F811
    tmp_path: Path,
) -> None:
    runtime.start_projections(READ_MODELS)
    async with client_for(runtime, keys.by_role[A]) as http:
        mia, max_ = keys.by_role[M], keys.second[M]
        assert (await registered(http, keys.by_role[A], COACH, ["assetmaintainer-1"])).is_success
        report, _ = await filed_at(http, keys.by_role[R], COACH)
        tenant = next(e["tenant"] for e in json.loads(keys.entries)
                      if e["subject"] == "assetmaintainer-1")  # fmt: skip
        lifted = await http.post(f"/factory/reports/{report}/lift", headers=auth(mia))
        assert lifted.status_code == 201, lifted.text
        case_id = lifted.json()["caseId"]
        confirmed = await http.post(f"/factory/evals/cases/{case_id}/confirm",
                                    json={"confirmed": True}, headers=auth(mia))  # fmt: skip
        assert confirmed.status_code == 200, confirmed.text

        # The night, as the scheduler's PlanNight runs it, with an agent that faults.
        catalogue = tmp_path / "models.toml"
        catalogue.write_text('[models."eu-1"]\nresidency = "eu"\n')
        nightly = NightlySettings(enabled=True, model="eu-1", catalogue=catalogue)
        cases = CaseRunner(runtime.store, runtime.bus, Faulting(), default_model=None,
                           thresholds={})  # fmt: skip
        night = date.today()
        order = PlanNight(date=night, now=datetime.now(UTC))
        await NightlyRunner(runtime.store, runtime.bus, runtime.pool, cases, nightly,
                            read_wait_seconds=30)(order)  # fmt: skip

        # Three failed evaluations of the agent, then the generator's day order: a proposal.
        now = datetime.now(UTC)
        for n in range(3):
            source, event_id = "urn:quality", f"ce-{uuid.uuid4().hex}"
            await runtime.bus.execute(
                Issued(failed_evaluation(n), tenant, source, f"ce/{source}/{event_id}", now,
                       identity=identity(tenant, source, event_id))
            )  # fmt: skip
        generator = ProposalGenerator(
            runtime.store, runtime.bus, runtime.pool,
            settings=lambda: LearningSettings.from_environ(
                {"FEEDBACKLOOP_LEARNING_MIN_EVIDENCE_ITEMS": "3"}
            ),
        )  # fmt: skip
        raised = await generator.run(RaiseProposals(now.date(), now))
        [proposal] = [str(p) for p in raised.raised]

        async def shown() -> bool:
            coach = by_agent(await overview(http, mia)).get(COACH, {})
            return bool(coach.get("night") and coach["proposals"]["waiting"])

        await until(shown)
        coach = by_agent(await overview(http, mia))[COACH]
        assert coach["night"]["date"] == night.isoformat()
        assert coach["night"]["failing"] == 1  # D252
        [line] = coach["night"]["items"]
        assert (line["caseId"], line["outcome"]) == (case_id, "failed")
        assert "agent exploded" in line["reason"]
        [waiting] = coach["proposals"]["items"]  # D253
        assert (waiting["proposalId"], waiting["state"], waiting["waitingFor"]) == (
            proposal, "Proposed", "pick-up",
        )  # fmt: skip
        # Picked up, it waits for a decision.
        picked = await http.post(f"/factory/learning/proposals/{proposal}/pick-up",
                                 headers=auth(mia))  # fmt: skip
        assert picked.status_code == 200, picked.text

        async def in_review() -> bool:
            items = by_agent(await overview(http, mia))[COACH]["proposals"]["items"]
            return bool(items) and items[0]["waitingFor"] == "decision"

        await until(in_review)
        # Another maintainer, of no agent here, sees none of it.
        assert (await overview(http, max_))["items"] == []


async def test_feedbackloop_agents_mine_prints_what_the_api_answers(
    runtime: Runtime,
    database_url: str,
    keys: RoleKeys,  # noqa: F811
) -> None:
    """D256: the CLI reads the same overview as the API, for one maintainer or every agent."""
    runtime.start_projections(READ_MODELS)
    admin, mia = keys.by_role[A], keys.by_role[M]
    async with client_for(runtime, admin) as http:
        assert (await registered(http, admin, COACH, ["assetmaintainer-1"])).is_success
        assert (await registered(http, admin, WRITER, ["assetmaintainer-2"])).is_success
        _, at = await filed_at(http, keys.by_role[R], COACH)
        answered = await overview(http, mia, at)
        tenant = runtime.keys.identify(admin)
    assert tenant is not None
    args = ("agents", "mine", "--tenant", tenant.tenant_id)
    said = await feedbackloop(database_url, *args, "--maintainer", "assetmaintainer-1", "--json")
    printed = json.loads(next(line for line in said.splitlines() if line.startswith('{"items"')))
    assert printed["items"] == answered["items"]
    table = await feedbackloop(database_url, *args)
    assert COACH in table
    assert WRITER in table
    assert "2 agents" in table
