"""``feedbackloop demo`` on a fresh database (decisions D68, D69): every list of the API has
content, the data is the same on every fresh store, and a second load is refused."""

import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from services.processes.bootstrap import Runtime
from services.processes.demo.cast import AGENTS, REPORTERS, REVIEWER
from services.processes.demo.loading import KEYS_FILE, AlreadyLoaded, load
from services.processes.settings import Settings
from tests.conftest import client_for, event_count, with_database

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]


@asynccontextmanager
async def fresh_runtime(postgres_url: str) -> AsyncIterator[Runtime]:
    name = f"t_demo_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(postgres_url)
    await admin.execute(f"CREATE DATABASE {name}")
    await admin.close()
    runtime = await Runtime.open(
        Settings(database_url=with_database(postgres_url, name), read_wait_seconds=20)
    )
    try:
        yield runtime
    finally:
        await runtime.close()
        admin = await asyncpg.connect(postgres_url)
        await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        await admin.close()


async def lists(runtime: Runtime, keys: dict[str, str]) -> dict[str, Any]:
    """What every list answers, without what the service mints afresh on each store (run
    ids, positions, wall-clock stamps of the runs)."""
    got: dict[str, Any] = {}

    async def items(path: str, subject: str = REVIEWER.subject) -> list[dict[str, Any]]:
        async with client_for(runtime, keys[subject]) as http:
            answer = await http.get(path)
        assert answer.status_code == 200, (path, answer.text)
        return list(answer.json()["items"])

    got["feedback"] = [
        (f["feedbackId"], f["kind"], f["rating"], f["givenBy"], f["givenAt"])
        for f in await items("/factory/feedback?limit=100")
    ]
    got["inbox"] = [
        (r["reportId"], r["reporter"], r["category"], r["status"], (r["parsed"] or {}).get("kind"))
        for r in await items("/factory/reports/inbox")
    ]
    got["mine"] = [
        (r["reportId"], r["status"]) for r in await items("/factory/reports/mine", "mara.keller")
    ]
    got["cases"] = [
        (c["caseId"], c["agent"], c["confirmedBy"], c["mustAssert"], c["mustGround"])
        for c in await items("/factory/evals/cases")
    ]
    got["manual runs"] = [
        sorted((r["runner"], r["ranBy"]) for r in (c.get("lastRuns") or []))
        for c in await items("/factory/evals/cases")
    ]
    got["nights"] = [
        (n["date"], n["status"], n["counts"]) for n in await items("/factory/evals/nights")
    ]
    got["digests"] = [
        (d["week"], d["reports"], d["agents"]) for d in await items("/factory/feedback/digests")
    ]
    got["datasets"] = [
        (d["datasetId"], [(v["version"], v["taskCount"], v["snapshotRef"]) for v in d["versions"]])
        for d in await items("/factory/evaluation/datasets")
    ]
    got["proposals"] = [
        (p["proposalId"], p["kind"], p["targetAssetId"], p["state"], p["reviewedBy"])
        for p in await items("/factory/learning/proposals")
    ]
    async with client_for(runtime, keys[REVIEWER.subject]) as http:
        charter = (await http.get("/factory/appraisal/charter")).json()
        got["charter"] = [line["id"] for line in charter["lines"]]
        got["agents"] = [
            (await http.get(f"/factory/agents/{agent.path}")).json() for agent in AGENTS
        ]
    return got


async def loaded(
    postgres_url: str, tmp_path: Path, check: Callable[[Runtime], Any] | None = None
) -> dict[str, Any]:
    async with fresh_runtime(postgres_url) as runtime:
        steps: list[str] = []
        keys = await load(runtime, tmp_path, steps.append)
        assert len(steps) == 11
        got = await lists(runtime, keys)
        if check is not None:
            await check(runtime)
        return got


async def test_the_demo_fills_every_list_and_a_fresh_store_gets_the_same_data(
    postgres_url: str, tmp_path: Path
) -> None:
    async def refused_again(runtime: Runtime) -> None:
        before = await event_count(runtime)
        with pytest.raises(AlreadyLoaded):  # decisions D69: a second load refuses
            await load(runtime, tmp_path / "again", lambda _: None)
        assert await event_count(runtime) == before

    first = await loaded(postgres_url, tmp_path / "one", refused_again)

    assert len(first["feedback"]) == 16
    assert {kind for _, kind, *_ in first["feedback"]} == {
        "rating",
        "comment",
        "correction",
        "escalation",
    }
    assert first["feedback"][-1][4] == "2026-11-16T09:00:00+00:00"  # the fixed clock origin
    # Thirteen reports; the bugs and the idea are handed over to engineering (W26), the
    # rest are in the Inbox in every state.
    assert len(first["inbox"]) == 9
    assert {status for *_, status, _ in first["inbox"]} == {"New", "Triaged", "Resolved", "WontFix"}
    assert {r[1] for r in first["inbox"]} == {p.subject for p in REPORTERS}
    assert "Resolved" in {s for _, s in first["mine"]}
    assert len(first["mine"]) == 5
    assert len(first["cases"]) == 4
    assert all(confirmer for _, _, confirmer, *_ in first["cases"])
    assert all(
        ("manual", c) in runs
        for (_, _, c, *_), runs in zip(first["cases"], first["manual runs"], strict=True)
    )
    assert first["nights"] == [
        (
            "2026-11-30",
            "Succeeded",
            {"selected": 4, "ran": 4, "skipped": 0, "overCap": 0, "failed": 0},
        )
    ]
    assert [week for week, *_ in first["digests"]] == ["2026-W48"]
    ((dataset, versions),) = first["datasets"]
    assert dataset == "agent:AgenticOffice/Agent/Billing"
    assert [(v, n) for v, n, _ in versions] == [(1, 3), (2, 4)]
    assert first["proposals"], "failed evaluations raise proposals"
    assert ("InReview", "nina.rossi") in {(p[3], p[4]) for p in first["proposals"]}
    assert first["charter"] == [
        "grounded",
        "reports-closed",
        "questions-answered",
        "few-interventions",
    ]
    assert [a["maintainers"] for a in first["agents"]] == [[a.maintainer.subject] for a in AGENTS]
    assert (tmp_path / "one" / KEYS_FILE).exists()

    second = await loaded(postgres_url, tmp_path / "two")
    assert second == first
