"""The triage intake of the weekly digest on a real PostgreSQL and a real Kafka, against a
local GitHub stand-in that validates every request against GitHub's published schema (SPEC
W129–W134, W136, W138; decisions D64–D66).

Three weeks of reports for two agents, each registered with a repository of its own: the
first week files one issue per agent (W132–W134), the next weeks comment on it (W131, W132);
a ``kill -9`` of the intake process between the tracker's answer and the ledger's write
neither loses nor doubles a comment; a replay of every digest post from position 0 changes
nothing; the ledger counts the digests in their own column (W136)."""

import asyncio
import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from contracts import topics
from contracts.agent_register import RegisterAgent, RegisterAgentCommand
from contracts.weeks import due_at
from projections.digests import get_digest
from projections.standing_issues import get_standing_issue, list_standing_issues
from services.bus.issued import Issued
from services.digests.domain import NO_ROUTE
from services.digests.intake import NAME, TriageIntake
from services.followers.follower import Follower
from services.followers.waiting import wait_for_position
from services.processes.bootstrap import Runtime
from services.processes.settings import Settings
from services.scheduling.orders import BuildDigest
from tests.conftest import Keys, client_for, settings_for
from tests.github_standin import GitHubStandin, github_standin
from tests.integration.test_digest import COACH, WRITER, submit, tenant_of
from tests.kafka_peer import consume

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "ghp_standin_token_of_the_tenant"
REPOSITORIES = {COACH: "acme/office-coach", WRITER: "acme/writer"}
WEEKS = {  # week → its Monday
    "2026-W45": datetime(2026, 11, 2, tzinfo=UTC),
    "2026-W46": datetime(2026, 11, 9, tzinfo=UTC),
    "2026-W47": datetime(2026, 11, 16, tzinfo=UTC),
}


@pytest.fixture
def tracker() -> Iterator[GitHubStandin]:
    with github_standin(
        TOKEN, set(REPOSITORIES.values()) | {"Systemorph/MeshWeaver.Feedback"}
    ) as s:
        yield s


def trackers_json(keys: Keys, tracker: GitHubStandin) -> str:
    return json.dumps({tenant_of(keys): {"url": tracker.url, "token": TOKEN}})


@pytest.fixture
async def live(
    database_url: str, keys: Keys, kafka_bootstrap: str, tracker: GitHubStandin
) -> AsyncIterator[Runtime]:
    """The service's parts on real Kafka with its read models following (the intake itself
    runs as a process of its own, to be killed)."""
    base = settings_for(database_url, keys, kafka_bootstrap)
    settings = Settings.model_validate(
        {**base.model_dump(), "trackers": json.loads(trackers_json(keys, tracker)),
         "tracker_backoff_seconds": 0.2}
    )  # fmt: skip
    runtime = await Runtime.open(settings)
    runtime.start_projections()
    await runtime.start_relay()
    yield runtime
    await runtime.close()


class IntakeProcess:
    """``feedbackloop handover`` (which runs the intake), started and SIGKILLed by the test."""

    def __init__(self, database_url: str, keys: Keys, tracker: GitHubStandin, log: Path):
        self.env = {
            **os.environ,
            "DATABASE_URL": database_url,
            "FEEDBACKLOOP_API_KEYS": keys.entries,
            "FEEDBACKLOOP_TRACKERS": trackers_json(keys, tracker),
            "FEEDBACKLOOP_TRACKER_BACKOFF_SECONDS": "0.2",
            "FEEDBACKLOOP_METRICS_PORT": "0",
        }
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("a") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "services.processes.cli", "handover"],
                cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip

    def kill9(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()


@pytest.fixture
def intake(
    database_url: str, keys: Keys, tracker: GitHubStandin, tmp_path: Path
) -> Iterator[IntakeProcess]:
    process = IntakeProcess(database_url, keys, tracker, tmp_path / "intake.log")
    yield process
    process.stop()


async def register(runtime: Runtime, tenant: str, agent: str, repository: str | None) -> None:
    command = RegisterAgentCommand(
        agent=agent, registration=RegisterAgent(maintainers=["maria"], repository=repository)
    )
    issued = Issued(command, tenant, "admin", uuid.uuid4().hex, datetime.now(UTC),
                    roles=frozenset({"PlatformAdmin"}))  # fmt: skip
    await runtime.bus.execute(issued)


async def digest_week(runtime: Runtime, tenant: str, week: str, reports: int) -> None:
    """``reports`` wrong answers of each agent in ``week``, then its digest built and posted."""
    monday = WEEKS[week]
    for n in range(reports):
        await submit(runtime, tenant, monday + timedelta(days=1, hours=n), agent=COACH)
        await submit(runtime, tenant, monday + timedelta(days=2, hours=n), agent=WRITER)
    posted = await runtime.digest_builder().run(BuildDigest(week=week, now=due_at(week)))
    assert len(posted) == 1


async def taken(runtime: Runtime, tenant: str, week: str, log: Path) -> dict[str, Any]:
    """The ledger once both agents' items of ``week`` are in it (the intake's log if not)."""
    try:
        async with asyncio.timeout(120):
            while True:
                ledger = {s["agent"]: s for s in await list_standing_issues(runtime.pool, tenant)}
                if len(ledger) == 2 and all(s["lastWeek"] == week for s in ledger.values()):
                    return ledger
                await asyncio.sleep(0.2)
    except TimeoutError:
        raise AssertionError(await asyncio.to_thread(log.read_text)) from None


def comments_of(tracker: GitHubStandin, repository: str) -> list[str]:
    (issue,) = tracker.issues_of(repository)
    return [str(c["body"]) for c in issue.comments]


async def test_three_weeks_file_once_comment_after_and_survive_a_kill_and_a_replay(
    live: Runtime, keys: Keys, tracker: GitHubStandin, intake: IntakeProcess, kafka_bootstrap: str
) -> None:
    tenant = tenant_of(keys)
    for agent, repository in REPOSITORIES.items():
        await register(live, tenant, agent, repository)
    intake.start()

    # Week 1: one issue per agent, in the agent's own repository (W132–W134).
    await digest_week(live, tenant, "2026-W45", reports=2)
    ledger = await taken(live, tenant, "2026-W45", intake.log)
    for agent, repository in REPOSITORIES.items():
        (issue,) = tracker.issues_of(repository)
        assert issue.title == f"Wrong answers — {agent}"  # W133
        assert issue.labels == ["feedback", "wrong-answer-digest"]  # W133
        assert "2026-W45" in issue.body
        assert ledger[agent]["issueUrl"] == tracker.html(issue)
        assert ledger[agent]["repository"] == repository
        assert (ledger[agent]["digests"], ledger[agent]["comments"]) == (1, 0)  # W136
    assert tracker.issues_of("Systemorph/MeshWeaver.Feedback") == []  # W134: never the inbox

    # Week 2: the intake is SIGKILLed after the tracker made a comment, before the ledger's
    # write; restarted, it finds the comment it made (decisions D65) and makes no other.
    tracker.hold_after_comment = True
    await digest_week(live, tenant, "2026-W46", reports=1)
    assert await asyncio.to_thread(tracker.held.wait, 120)
    intake.kill9()
    tracker.release.set()
    intake.start()
    ledger = await taken(live, tenant, "2026-W46", intake.log)

    # Week 3: another comment on the same issue (W131: carried from the nearest item).
    await digest_week(live, tenant, "2026-W47", reports=3)
    ledger = await taken(live, tenant, "2026-W47", intake.log)
    for agent, repository in REPOSITORIES.items():
        comments = comments_of(tracker, repository)
        assert len(comments) == 2, comments
        assert ["2026-W46" in comments[0], "2026-W47" in comments[1]] == [True, True]
        assert (ledger[agent]["digests"], ledger[agent]["comments"]) == (3, 2)  # W136
    intake.stop()

    # A replay of every digest post from position 0 changes nothing, on the tracker or in
    # the ledger (a reader of its own, from the log's start, through the same intake).
    before = {
        r: (len(tracker.issues_of(r)), comments_of(tracker, r)) for r in REPOSITORIES.values()
    }
    replay = TriageIntake(live.store, live.bus, live.triage_intake().trackers)
    replay.name = f"{NAME}-replay"
    async with live.pool.acquire() as conn:
        await Follower(live.store, live.pool, replay).catch_up(conn)
    after = {r: (len(tracker.issues_of(r)), comments_of(tracker, r)) for r in REPOSITORIES.values()}
    assert after == before
    assert {a: (s["digests"], s["comments"]) for a, s in
            (await taken(live, tenant, "2026-W47", intake.log)).items()} == {
        COACH: (3, 2), WRITER: (3, 2)}  # fmt: skip
    view = await get_standing_issue(live.pool, tenant, COACH)
    assert view is not None
    assert [i["outcome"] for i in view["items"]] == ["commented", "commented", "filed"]
    # W138: each item is the one a neighbour reads on `digest-posted` (its itemId).
    topic = live.settings.topic_prefix + topics.DIGEST_POSTED
    published = await consume(kafka_bootstrap, topic, count=6)
    posted = {json.loads(r.value)["data"]["itemId"] for r in published}
    ledger_items = {
        i["itemId"]
        for agent in REPOSITORIES
        for i in ((await get_standing_issue(live.pool, tenant, agent)) or {"items": []})["items"]
    }
    assert ledger_items == posted
    assert tracker.violations == []


async def test_an_agent_without_a_repository_is_a_finding_and_nothing_is_filed(
    live: Runtime, keys: Keys, tracker: GitHubStandin
) -> None:
    """W134: no repository in the register → the item is unrouted, with the finding; no
    guess, no fleet-wide inbox. A tracker that is down delays the other agent's issue and
    says so in the intake's status (decisions D66); once up, it is filed once."""
    tenant = tenant_of(keys)
    await register(live, tenant, COACH, REPOSITORIES[COACH])
    await register(live, tenant, WRITER, None)
    tracker.down = True
    intake = live.triage_intake()
    said: list[str] = []
    await intake.open(said.append)
    await digest_week(live, tenant, "2026-W45", reports=1)
    follower = Follower(live.store, live.pool, intake)
    async with live.pool.acquire() as conn:
        catching_up = asyncio.create_task(follower.catch_up(conn))
        async with asyncio.timeout(60):
            while not any("tracker unavailable" in s for s in said):
                await asyncio.sleep(0.1)
        assert tracker.issues == []
        tracker.down = False
        await catching_up
    ledger = await taken(live, tenant, "2026-W45", Path("/dev/null"))
    assert ledger[WRITER]["finding"] is not None
    assert "no repository" in ledger[WRITER]["finding"]
    assert ledger[WRITER]["issueUrl"] is None
    assert len(tracker.issues_of(REPOSITORIES[COACH])) == 1
    assert tracker.issues_of("Systemorph/MeshWeaver.Feedback") == []
    assert tracker.violations == []

    # The finding is visible over HTTP, to the tenant only.
    async with client_for(live, keys.a) as http:
        listed = await http.get("/factory/feedback/standing-issues")
        assert listed.status_code == 200, listed.text
        by_agent = {s["agent"]: s for s in listed.json()["items"]}
        assert by_agent[WRITER]["repository"] is None
        assert "no repository" in by_agent[WRITER]["finding"]
        assert by_agent[COACH]["issueUrl"] == tracker.html(tracker.issues[0])
        one = await http.get(f"/factory/feedback/standing-issues/{WRITER}")
        assert one.status_code == 200, one.text
        assert [i["outcome"] for i in one.json()["items"]] == ["unrouted"]
    async with client_for(live, keys.b) as http:
        other = await http.get("/factory/feedback/standing-issues")
        assert other.json()["items"] == []
        absent = await http.get(f"/factory/feedback/standing-issues/{COACH}")
        assert absent.status_code == 404, absent.text
        assert "agent" in absent.text

    # And on the command line (`feedbackloop intake show`).
    shown = await asyncio.to_thread(intake_show, live, tenant)
    assert shown.returncode == 0, shown.stderr
    assert "acme/office-coach" in shown.stdout
    assert "no repository" in shown.stdout
    absent_agent = await asyncio.to_thread(intake_show, live, tenant, "Nobody/Agent")
    assert absent_agent.returncode == 1
    assert "no standing issue" in absent_agent.stderr


def intake_show(runtime: Runtime, tenant: str, *agent: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATABASE_URL": str(runtime.settings.database_url), "COLUMNS": "400"}
    return subprocess.run(
        [sys.executable, "-m", "services.processes.cli", "intake", "show", "--tenant", tenant,
         *agent],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


async def posted_digest(runtime: Runtime, tenant: str, week: str) -> dict[str, Any]:
    """The digest of ``week`` as its read model holds it once it has applied the log."""
    head = await asyncio.to_thread(runtime.store.recorder.max_notification_id) or 0
    assert await wait_for_position(runtime.pool, "rm_digests", head, 30) >= head
    found = await get_digest(runtime.pool, tenant, week)
    assert found is not None
    return found


async def test_a_tenant_with_only_a_tracker_has_its_digest_filed(
    database_url: str, keys: Keys, tracker: GitHubStandin
) -> None:
    """The embedded default with ``FEEDBACKLOOP_TRACKERS`` and neither Kafka nor a webhook:
    the tracker is a route of its own (W124, W132-W134; decisions D150), so the digest is
    posted and the intake files the agent's standing issue. The tenant without a tracker
    still has no route (W128)."""
    settings = Settings.model_validate(
        {**settings_for(database_url, keys).model_dump(),
         "trackers": json.loads(trackers_json(keys, tracker)), "tracker_backoff_seconds": 0.2}
    )  # fmt: skip
    assert settings.kafka_bootstrap_servers is None
    assert settings.handover_webhook_url is None
    runtime = await Runtime.open(settings)
    try:
        runtime.start_projections()
        assert runtime.start_intake() is not None
        tenant = tenant_of(keys)
        await register(runtime, tenant, COACH, REPOSITORIES[COACH])
        await register(runtime, tenant, WRITER, REPOSITORIES[WRITER])
        await digest_week(runtime, tenant, "2026-W45", reports=1)
        view = await posted_digest(runtime, tenant, "2026-W45")
        assert view["posted"]["routes"] == [f"tracker:{tracker.url}"]
        assert view["posted"]["note"] is None
        async with asyncio.timeout(60):
            while len(tracker.issues) < 2:
                await asyncio.sleep(0.2)
        (coach_issue,) = tracker.issues_of(REPOSITORIES[COACH])
        assert coach_issue.title == f"Wrong answers — {COACH}"
        assert len(tracker.issues_of(REPOSITORIES[WRITER])) == 1
        assert tracker.violations == []

        other = next(e["tenant"] for e in json.loads(keys.entries) if e["tenant"] != tenant)
        await submit(runtime, other, WEEKS["2026-W45"] + timedelta(days=1), agent=COACH)
        await runtime.digest_builder().run(BuildDigest(week="2026-W45", now=due_at("2026-W45")))
        view_b = await posted_digest(runtime, other, "2026-W45")
        assert view_b["posted"]["routes"] == [], view_b
        assert view_b["posted"]["note"] == NO_ROUTE, view_b
    finally:
        await runtime.close()
