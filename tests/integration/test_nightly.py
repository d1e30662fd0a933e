"""The nightly runner on a real PostgreSQL, with the stand-in agent over real HTTP.

SPEC W78–W103 and §3.8: cap and order, reasons a case does not run, a faulting case that does
not stop the night, a confirmer removed from the agent register (before the night, and during
it as a standalone scheduler sees it), a maintainer who signs in only at an OAuth2 issuer, a
register that cannot be read, a crash mid-night that resumes only what is missing, a second
pass that runs nothing, and two runners at once that run one night, each conversation once.
"""

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from contracts.agent import AgentReply, AgentRequest
from services.edge.auth import SCOPES
from services.evals.agents import AgentClient, HttpAgentClient
from services.evals.runs import CaseRunner
from services.followers.waiting import wait_for_position
from services.nightly.confirmer import why_confirmer_cannot
from services.nightly.domain import night_id
from services.nightly.runner import NightlyRunner
from services.nightly.settings import NightlySettings
from services.processes.bootstrap import Runtime
from services.processes.settings import Settings
from services.scheduling.orders import PlanNight
from services.store.event_store import EVENTS_TABLE
from services.store.opening import open_store
from tests.conftest import SEED_AGENT, Keys, maintain, settings_for
from tests.oidc_tokens import by_the_issuers_key, oidc_issuer, started_issuer, with_issuer
from tests.standin import standin_agent
from tests.unit.test_wrong_answer import SEED_FACTS

NODE = "sglauser/AgenticOffice/Firmenprofil"
SCRIPT = {
    "modelName": "standin-1",
    "rules": [
        {
            "when": "Stundenansatz",
            "text": "Konzept-Ansatz CHF 150 steht im Firmenprofil.",
            "toolCalls": [{"name": "Get", "arguments": NODE, "result": "CHF 150"}],
        },
        {"when": "Tagessatz", "modelName": "us-1", "text": "CHF 1200."},
    ],
    "default": {"text": "I don't know."},
}
CATALOGUE = """
[models."eu-1"]
residency = "eu"
[models."us-1"]
residency = "us"
[models."unmarked"]
note = "no residency mark"
"""
ORDER = PlanNight(date=date(2026, 11, 29), now=datetime(2026, 11, 29, 1, 0, tzinfo=UTC))
NIGHT = "2026-11-29"
# The agent's maintainers in the register (D77): the keys' people, and olga, who has no key
# and signs in at the OAuth2 issuer only.
MAINTAINERS = ("alice", "anna", "bob", "olga")


@pytest.fixture(scope="module")
def standin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with standin_agent(SCRIPT, tmp_path_factory.mktemp("standin")) as url:
        yield url


@dataclass
class Door:
    """The service's parts, and its HTTP API in-process, on a fresh database."""

    runtime: Runtime
    http: httpx.AsyncClient
    keys: Keys
    keys_file: Path
    catalogue: Path


@pytest.fixture(scope="module")
def issuer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[oidc_issuer.Issuer]:
    yield from started_issuer(tmp_path_factory)


@contextlib.asynccontextmanager
async def opened_door(
    database_url: str,
    keys: Keys,
    standin: str,
    tmp_path: Path,
    issuer: oidc_issuer.Issuer | None = None,
    kafka: str | None = None,
) -> AsyncIterator[Door]:
    """The service on a fresh database; with ``issuer``, people of tenant A may sign in at it
    too (a console's OIDC sign-in, D102); with ``kafka``, on that broker, topics of its own."""
    keys_file = tmp_path / "keys.json"
    keys_file.write_text(keys.entries)
    catalogue = tmp_path / "models.toml"
    catalogue.write_text(CATALOGUE)
    settings: Settings = settings_for(database_url, keys, kafka).model_copy(
        update={"api_keys": [], "api_keys_file": keys_file, "agent_url": standin}
    )
    if issuer is not None:
        settings = with_issuer(settings, issuer, 30.0, tenants=(tenant_of(keys),))
    runtime = await Runtime.open(settings)
    runtime.start_projections(["eval_cases", "nights"])
    transport = httpx.ASGITransport(app=runtime.app())
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
            yield Door(runtime, http, keys, keys_file, catalogue)
    finally:
        await runtime.close()


@pytest.fixture
async def door(database_url: str, keys: Keys, standin: str, tmp_path: Path) -> AsyncIterator[Door]:
    async with opened_door(database_url, keys, standin, tmp_path) as opened:
        yield opened


@pytest.fixture
async def door_with_issuer(
    database_url: str, keys: Keys, standin: str, tmp_path: Path, issuer: oidc_issuer.Issuer
) -> AsyncIterator[Door]:
    async with opened_door(database_url, keys, standin, tmp_path, issuer) as opened:
        yield opened


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def confirmed_case(
    door: Door,
    prompt: str,
    *,
    key: str = "",
    model: str = "",
    admin: str = "",
    agent: str = SEED_AGENT,
) -> str:
    """A submitted wrong-answer report about ``agent``, lifted and confirmed by the key's (or
    token's) holder; ``admin`` (by default the key itself) registers the agent's maintainers
    first (D77)."""
    key = key or door.keys.a
    http, headers = door.http, auth(key)
    await maintain(http, admin or key, MAINTAINERS, agent)  # the holder confirms as maintainer
    reply = {**SEED_FACTS["reply"], "agentName": agent}
    facts = {**SEED_FACTS, "reply": reply, "prompt": prompt, "context": ["sglauser/AgenticOffice"]}
    draft = await http.post("/factory/reports/wrong-answer", json=facts, headers=headers)
    report = draft.json()["reportId"]
    assert (await http.post(f"/factory/reports/{report}/submit", headers=headers)).is_success
    lifted = await http.post(f"/factory/reports/{report}/lift", headers=headers)
    assert lifted.status_code == 201, lifted.text
    case_id: str = lifted.json()["caseId"]
    if model:
        pinned = await http.patch(
            f"/factory/evals/cases/{case_id}", json={"model": model}, headers=headers
        )
        assert pinned.status_code == 200, pinned.text
    confirmed = await http.post(
        f"/factory/evals/cases/{case_id}/confirm", json={"confirmed": True}, headers=headers
    )
    assert confirmed.status_code == 200, confirmed.text
    return case_id


@dataclass
class Agent:
    """The stand-in over real HTTP, with what each conversation asked kept; a prompt with
    "explode" faults (not an agent's failed reply: an error the night did not foresee), and
    from call ``hang_after`` on, calls wait forever (a process about to be killed)."""

    url: str
    asked: list[AgentRequest] = field(default_factory=list)
    hang_after: int | None = None
    hanging: asyncio.Event = field(default_factory=asyncio.Event)
    needs_model: bool = False

    async def reply(self, request: AgentRequest) -> AgentReply:
        if self.hang_after is not None and len(self.asked) >= self.hang_after:
            self.hanging.set()
            await asyncio.Event().wait()
        self.asked.append(request)
        if "explode" in request.prompt:
            raise RuntimeError("agent exploded")
        return await HttpAgentClient(self.url).reply(request)

    def conversations(self) -> list[tuple[str, str]]:
        """(run, index) of each conversation asked, from its thread ref."""
        return [tuple(r.thread_ref.rsplit("/", 2)[-2:]) for r in self.asked]  # type: ignore[misc]


def runner(door: Door, agent: AgentClient | None, **settings: Any) -> NightlyRunner:
    runtime = door.runtime
    nightly = NightlySettings(
        **{"enabled": True, "model": "eu-1", "catalogue": door.catalogue, **settings}
    )
    cases = CaseRunner(runtime.store, runtime.bus, agent, default_model=None, thresholds={})
    return NightlyRunner(
        runtime.store, runtime.bus, runtime.pool, cases, nightly, read_wait_seconds=30
    )


async def night_view(door: Door, key: str = "") -> dict[str, Any]:
    runtime = door.runtime
    head = await runtime.pool.fetchval(f"SELECT max(notification_id) FROM {EVENTS_TABLE}")
    await wait_for_position(runtime.pool, "rm_nights", head, 20)
    read = await door.http.get(f"/factory/evals/nights/{NIGHT}", headers=auth(key or door.keys.a))
    assert read.status_code == 200, read.text
    body: dict[str, Any] = read.json()
    return body


def lines_by_case(night: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {line["case"]: line for line in night["lines"]}


async def unregister(door: Door, person: str) -> None:
    """Tenant A's PlatformAdmin takes ``person`` out of the agent's maintainers (D77)."""
    await maintain(door.http, door.keys.a, tuple(m for m in MAINTAINERS if m != person))


async def test_a_night_runs_the_first_runnable_cases_in_order_and_says_why_the_others_did_not(
    door: Door, standin: str
) -> None:
    """W78, W88–W90, W93–W103: cap and order; a non-EU model, an unreadable mark and a
    confirmer removed from the agent register before the night take no slot (W95, W99:
    asked at planning, of the register, D103); a faulting case gets its line and the night
    goes on; results land on the case with the night; a second pass runs nothing."""
    ask = "Welchen Stundenansatz verrechne ich"
    ran_before = await confirmed_case(door, f"{ask}? (ran before)")
    run = await door.http.post(
        f"/factory/evals/cases/{ran_before}/runs", json={"conversations": 1},
        headers=auth(door.keys.a),
    )  # fmt: skip
    assert run.status_code == 201, run.text  # the HTTP route still runs as the person (W56)
    plain = [await confirmed_case(door, f"{ask}? ({n})") for n in ("one", "two")]
    faulting = await confirmed_case(door, f"{ask}? explode")
    removed = await confirmed_case(door, f"{ask}? (anna's)", key=door.keys.a_other)
    not_eu = await confirmed_case(door, f"{ask}? (us)", model="us-1")
    unmarked = await confirmed_case(door, f"{ask}? (unmarked)", model="unmarked")
    await confirmed_case(door, f"{ask}? (tenant B)", key=door.keys.b)
    unconfirmed = await door.http.post(
        "/factory/reports/wrong-answer", json={**SEED_FACTS, "prompt": f"{ask}? (draft)"},
        headers=auth(door.keys.a),
    )  # fmt: skip
    assert unconfirmed.is_success
    await unregister(door, "anna")  # anna is no maintainer any more, her key lives on (W99)

    agent = Agent(standin)
    await runner(door, agent, max_cases=3, conversations_per_case=2)(ORDER)

    night = await night_view(door)
    assert night["status"] == "Warning"  # a case skipped or failed (W90)
    assert night["finishedAt"] is not None
    assert "cap reached" in night["note"]
    never_run = sorted([*plain, faulting], key=lambda c: night_ref(night, c))
    assert [s["case"] for s in night["selected"]] == never_run  # W93: never-run, ties by ref
    lines = lines_by_case(night)
    assert lines[ran_before]["outcome"] == "over-cap"  # W96: it ran before, so it comes last
    assert lines[not_eu]["reason"] == "model-not-eu-routed"  # W97
    assert lines[unmarked]["reason"] == "model-residency-unreadable"  # W98
    assert lines[removed]["reason"] == "confirmer-lacks-update"  # W99
    assert lines[faulting]["outcome"] == "failed"  # W103
    assert lines[faulting]["reason"] == "failed: RuntimeError: agent exploded"
    for case_id in plain:
        assert lines[case_id]["outcome"] == "ran"
        assert lines[case_id]["score"]["passed"] is True
        assert (lines[case_id]["model"], lines[case_id]["effort"]) == ("eu-1", "medium")
        assert len(lines[case_id]["threads"]) == 2
    assert len(lines) == 7  # every confirmed case of tenant A has its line; B's is B's
    assert night["counts"] == {"selected": 3, "ran": 2, "skipped": 3, "overCap": 1, "failed": 1}

    # W101: each conversation ran as the confirmer, on the EU model, at the night's effort.
    # Tenant A: two cases of two, the faulting one's first; tenant B's night, bob's case.
    asked_as = [r.submitter for r in agent.asked]
    assert (asked_as.count("alice"), asked_as.count("bob"), len(asked_as)) == (5, 2, 7)
    assert {(r.requested_model, r.effort) for r in agent.asked} == {("eu-1", "medium")}
    # W102: the result is on the case, with the night, model and effort.
    case = await door.http.get(f"/factory/evals/cases/{plain[0]}", headers=auth(door.keys.a))
    last = case.json()["lastRun"]
    assert (last["night"], last["model"], last["effort"], last["ranBy"]) == (
        NIGHT, "eu-1", "medium", "alice",
    )  # fmt: skip

    # W92: a second pass runs nothing and writes nothing.
    before = await door.runtime.pool.fetchval(f"SELECT count(*) FROM {EVENTS_TABLE}")
    await runner(door, agent, max_cases=3, conversations_per_case=2)(ORDER)
    assert len(agent.asked) == 7
    after = await door.runtime.pool.fetchval(f"SELECT count(*) FROM {EVENTS_TABLE}")
    assert after == before

    # The API: tenant-scoped, newest first.
    listed = await door.http.get("/factory/evals/nights", headers=auth(door.keys.a))
    assert [n["date"] for n in listed.json()["items"]] == [NIGHT]
    other = await door.http.get(f"/factory/evals/nights/{NIGHT}", headers=auth(door.keys.b))
    assert other.status_code == 200  # tenant B had a confirmed case: a night of its own
    assert [s["case"] for s in other.json()["selected"]] != night["selected"]
    missing = await door.http.get("/factory/evals/nights/2026-11-28", headers=auth(door.keys.a))
    assert missing.status_code == 404


def night_ref(night: dict[str, Any], case_id: str) -> str:
    refs = {s["case"]: s["ref"] for s in night["selected"]}
    return refs[case_id]


async def test_the_composition_roots_runner_reads_its_settings_from_the_environment(
    door: Door, standin: str
) -> None:
    """W80: off by default, a night plans nothing. W86, W87: built by the composition root,
    as the scheduler gets it, from the environment; its confirmer check asks the register."""
    case_id = await confirmed_case(door, "Welchen Stundenansatz verrechne ich?")
    off = door.runtime.nightly_runner({})
    await off(ORDER)
    assert await door.runtime.pool.fetchval("SELECT count(*) FROM rm_nights.nights") == 0
    night_runner = door.runtime.nightly_runner(
        {
            "FEEDBACKLOOP_EVALS_NIGHTLY_ENABLED": "true",
            "FEEDBACKLOOP_EVALS_NIGHTLY_MODEL": "eu-1",
            "FEEDBACKLOOP_EVALS_NIGHTLY_MAX_CASES": "lots",
            "FEEDBACKLOOP_MODEL_CATALOGUE": str(door.catalogue),
        }
    )
    await night_runner(ORDER)
    night = await night_view(door)
    assert lines_by_case(night)[case_id]["outcome"] == "ran"
    assert "FEEDBACKLOOP_EVALS_NIGHTLY_MAX_CASES" in night["note"]  # W86
    assert night["inputs"]["maxCases"] == 15
    assert night["inputs"]["now"] == ORDER.now.isoformat()  # W87: created with its inputs


async def test_a_register_that_cannot_be_read_is_unavailable_never_a_denial(
    door: Door, database_url: str
) -> None:
    """W100: the check cannot be evaluated (the store's database connection is gone); it
    does not say no. The same person's right, read from a store that answers, holds."""
    await maintain(door.http, door.keys.a, MAINTAINERS)
    tenant = keys_tenant(door)
    assert why_confirmer_cannot(door.runtime.store, tenant, "alice", SEED_AGENT) is None
    closed = open_store(database_url)
    closed.close()
    reason = why_confirmer_cannot(closed, tenant, "alice", SEED_AGENT)
    assert reason == "permission-check-unavailable"


async def test_a_crash_mid_night_resumes_only_the_missing_conversations_and_cases(
    door: Door, standin: str
) -> None:
    """W89, W91, W92: the runner's task is cancelled after four of six conversations; the
    restart runs the last two only, and the run of the interrupted case holds all three."""
    ask = "Welchen Stundenansatz verrechne ich"
    cases = [await confirmed_case(door, f"{ask}? ({n})") for n in ("one", "two")]
    first = Agent(standin, hang_after=4)
    task = asyncio.create_task(runner(door, first, conversations_per_case=3)(ORDER))
    await asyncio.wait_for(first.hanging.wait(), 60)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(first.asked) == 4

    again = Agent(standin)
    await runner(door, again, conversations_per_case=3).resume()
    assert [index for _, index in again.conversations()] == ["2", "3"]
    night = await night_view(door)
    assert night["status"] == "Succeeded"
    assert night["conversations"] == 6  # each conversation recorded once
    lines = lines_by_case(night)
    assert all(lines[c]["outcome"] == "ran" for c in cases)
    interrupted_run = first.conversations()[3][0]  # the fourth: the second case's first
    interrupted = next(line["case"] for line in night["lines"] if line["runId"] == interrupted_run)
    case = await door.http.get(f"/factory/evals/cases/{interrupted}", headers=auth(door.keys.a))
    runs = case.json()["runs"]
    assert len(runs) == 1
    assert [t["index"] for t in runs[0]["threads"]] == [1, 2, 3]
    # the interrupted run is the same run: the night's deterministic run id (W91)
    assert {run for run, _ in again.conversations()} == {interrupted_run}

    await runner(door, again, conversations_per_case=3)(ORDER)  # W92: nothing more
    assert len(again.asked) == 2


async def test_two_runners_at_once_run_one_night_each_conversation_once(
    door: Door, standin: str, database_url: str, keys: Keys
) -> None:
    """W92: two processes (two runtimes on one database) called at once."""
    ask = "Welchen Stundenansatz verrechne ich"
    cases = [await confirmed_case(door, f"{ask}? ({n})") for n in ("one", "two", "three")]
    other = await Runtime.open(door.runtime.settings)
    try:
        agent = Agent(standin)
        here = runner(door, agent, conversations_per_case=2)
        there_door = Door(other, door.http, door.keys, door.keys_file, door.catalogue)
        there = runner(there_door, agent, conversations_per_case=2)
        await asyncio.gather(here(ORDER), there(ORDER))
        await asyncio.gather(here.resume(), there.resume())  # whoever lost the lock may ask
    finally:
        await other.close()
    conversations = agent.conversations()
    assert len(conversations) == len(set(conversations)) == 3 * 2
    nights = await door.runtime.pool.fetchval(
        f"SELECT count(DISTINCT originator_id) FROM {EVENTS_TABLE} WHERE originator_id = $1",
        night_id(keys_tenant(door), NIGHT),
    )
    assert nights == 1
    night = await night_view(door)
    assert night["status"] == "Succeeded"
    assert sorted(lines_by_case(night)) == sorted(cases)


def keys_tenant(door: Door) -> str:
    return tenant_of(door.keys)


def tenant_of(keys: Keys) -> str:
    """Tenant A: the tenant of the first key (alice's)."""
    return str(json.loads(keys.entries)[0]["tenant"])


async def test_a_reply_on_another_model_than_the_nights_is_a_non_answer(
    door: Door, standin: str
) -> None:
    """W98: no other model stands in for the EU model the night checked; such a reply is a
    non-answer (W71), never scored, and the run does not pass."""
    case_id = await confirmed_case(door, "Welchen Tagessatz verrechne ich?")
    await runner(door, Agent(standin), conversations_per_case=2)(ORDER)
    line = lines_by_case(await night_view(door))[case_id]
    assert line["outcome"] == "ran"
    assert line["score"] == {
        "passed": False, "scored": 0, "nonAnswers": 2, "lookedRate": None, "correctRate": None,
    }  # fmt: skip


async def test_a_case_whose_confirmer_lost_the_right_frees_its_slot_for_the_next_runnable_case(
    door: Door, standin: str
) -> None:
    """W95, W99 (issue: the check only before the run left the slot to nobody): MaxCases 2,
    three cases, the first in order (never run) confirmed by anna, who is taken out of the
    agent register before the night. The two runnable cases — both ran before, so they come
    after hers — both run."""
    ask = "Welchen Stundenansatz verrechne ich"
    ran_before = [await confirmed_case(door, f"{ask}? (ran {n})") for n in ("one", "two")]
    for case_id in ran_before:
        run = await door.http.post(
            f"/factory/evals/cases/{case_id}/runs", json={"conversations": 1},
            headers=auth(door.keys.a),
        )  # fmt: skip
        assert run.status_code == 201, run.text
    annas = await confirmed_case(door, f"{ask}? (anna's)", key=door.keys.a_other)
    await unregister(door, "anna")

    await runner(door, Agent(standin), max_cases=2, conversations_per_case=1)(ORDER)

    night = await night_view(door)
    assert sorted(s["case"] for s in night["selected"]) == sorted(ran_before)
    lines = lines_by_case(night)
    assert (lines[annas]["outcome"], lines[annas]["reason"]) == (
        "skipped",
        "confirmer-lacks-update",
    )
    assert [lines[c]["outcome"] for c in ran_before] == ["ran", "ran"]
    assert "cap reached" not in night["note"]


async def test_a_maintainer_removed_during_the_night_is_seen_by_a_standalone_scheduler(
    door: Door, standin: str
) -> None:
    """W99, decisions D103: asked again just before the case runs, of the register in the
    store. The night is planned and driven by a process of its own (a standalone
    ``feedbackloop scheduler``: another runtime, serving nothing, its key ring never
    refreshed); anna is taken out of the register through the API process between planning
    and the run, and the scheduler's check sees it."""
    annas = await confirmed_case(
        door, "Welchen Stundenansatz verrechne ich?", key=door.keys.a_other
    )
    scheduler = await Runtime.open(door.runtime.settings)
    try:
        agent = Agent(standin)
        there = Door(scheduler, door.http, door.keys, door.keys_file, door.catalogue)
        night_runner = runner(there, agent, max_cases=2, conversations_per_case=1)
        tenant = keys_tenant(door)
        head = await door.runtime.pool.fetchval(f"SELECT max(notification_id) FROM {EVENTS_TABLE}")
        await wait_for_position(door.runtime.pool, "rm_eval_cases", head, 20)
        await night_runner.plan(tenant, ORDER)
        await unregister(door, "anna")  # through the API process, not the scheduler's
        await night_runner.drive(tenant, NIGHT)
    finally:
        await scheduler.close()

    night = await night_view(door)
    assert [s["case"] for s in night["selected"]] == [annas]  # she held the right at planning
    assert lines_by_case(night)[annas]["reason"] == "confirmer-lacks-update"
    assert agent.asked == []


async def test_a_maintainer_who_signs_in_only_at_the_issuer_has_the_cases_they_confirmed_run(
    door_with_issuer: Door, standin: str, issuer: oidc_issuer.Issuer
) -> None:
    """W99, decisions D103: olga holds no API key at all; she signs in at the OAuth2 issuer
    (a person's token: its client is the console, not herself) and is a maintainer of the
    agent in the register. She confirms a case through the API with her token, and the night
    runs it as her (W101)."""
    door = door_with_issuer
    olgas_token = by_the_issuers_key(
        issuer, sub="olga", azp="console", client_id="console", tenant=keys_tenant(door),
        roles=["Requester", "AssetMaintainer"], scope=" ".join(SCOPES),
    )  # fmt: skip
    olgas = await confirmed_case(
        door, "Welchen Stundenansatz verrechne ich? (olga's)", key=olgas_token, admin=door.keys.a
    )
    agent = Agent(standin)
    await runner(door, agent, conversations_per_case=1)(ORDER)

    line = lines_by_case(await night_view(door))[olgas]
    assert line["outcome"] == "ran", line
    assert [request.submitter for request in agent.asked] == ["olga"]
