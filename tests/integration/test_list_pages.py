"""Every list route pages as the older lists do (``GET /factory/feedback``, the Inbox):
``limit`` (1–200) and ``before`` (the ``next`` of the previous page, an opaque token of the
tenant), answering ``{"items", "next"}``. A list longer than a page comes in pages, in the
list's order, nothing missed or repeated; the last page's ``next`` is null."""

import asyncio
from datetime import UTC, date, datetime, timedelta
from typing import Any

import httpx

from contracts.evals import LiftEvalCase
from contracts.nights import PlanTenantNight
from contracts.weeks import due_at
from services.followers.follower import wait_for_position
from services.processes.bootstrap import Runtime
from services.scheduling.orders import BuildDigest
from tests.conftest import Keys
from tests.integration.test_datasets import harvest, run_event, tenant_of
from tests.integration.test_digest import COACH, WRITER, send, submit
from tests.integration.test_learning import ORDER, failed_evaluation, generator, neighbour

COUNT = 5  # items of each list; pages of two: three pages
LISTS = (  # every list route (docs/http-api-doors.md, Pages)
    "/factory/feedback",
    "/factory/reports/inbox",
    "/factory/evals/cases",
    "/factory/evals/nights",
    "/factory/feedback/digests",
    "/factory/evaluation/datasets",
    "/factory/learning/proposals",
)


async def settled(runtime: Runtime, *read_models: str) -> None:
    head = await asyncio.to_thread(runtime.store.recorder.max_notification_id) or 0
    for read_model in read_models:
        assert await wait_for_position(runtime.pool, f"rm_{read_model}", head, 30) >= head


async def walk(
    client: httpx.AsyncClient, route: str, key: str, **params: str
) -> list[list[dict[str, Any]]]:
    """Every page of ``route``, two items a page, following ``next``."""
    pages, before = [], None
    while True:
        asked = {**params, "limit": "2", **({"before": before} if before else {})}
        answer = await client.get(route, params=asked)
        assert answer.status_code == 200, answer.text
        body = answer.json()
        pages.append(list(body["items"]))
        before = body["next"]
        if before is None:
            return pages
        assert len(pages) <= COUNT, "the pages do not end"


def keyed(pages: list[list[dict[str, Any]]], key: str) -> list[Any]:
    return [item[key] for page in pages for item in page]


async def test_datasets_come_in_pages_by_id(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    runtime.start_projections(["datasets"])
    tenant = tenant_of(keys, 0)
    for n in range(COUNT):
        await harvest(runtime, tenant, run_event(f"r-{n}", "urn:in", agentId=f"agent-{n}"), f"{n}")
    await settled(runtime, "datasets")
    pages = await walk(client, "/factory/evaluation/datasets", keys.a)
    assert [len(page) for page in pages] == [2, 2, 1]
    ids = keyed(pages, "datasetId")
    assert ids == sorted(ids) == [f"agent:agent-{n}" for n in range(COUNT)]
    whole = (await client.get("/factory/evaluation/datasets")).json()
    assert keyed([whole["items"]], "datasetId") == ids
    assert whole["next"] is None


async def test_nights_come_in_pages_newest_first(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    runtime.start_projections(["nights"])
    tenant = tenant_of(keys, 0)
    first = date(2026, 11, 20)
    for n in range(COUNT):
        day = first + timedelta(days=n)
        at = datetime(day.year, day.month, day.day, 2, tzinfo=UTC)
        plan = PlanTenantNight(date=day, now=at, inputs={}, selected=[], lines=[], note="")
        await send(runtime, tenant, plan, at)
    await settled(runtime, "nights")
    pages = await walk(client, "/factory/evals/nights", keys.a)
    assert [len(page) for page in pages] == [2, 2, 1]
    expected = [(first + timedelta(days=n)).isoformat() for n in reversed(range(COUNT))]
    assert keyed(pages, "date") == expected


async def test_digests_come_in_pages_newest_week_first(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    runtime.start_projections()
    tenant = tenant_of(keys, 0)
    await submit(runtime, tenant, datetime(2026, 10, 1, tzinfo=UTC))
    weeks = [f"2026-W{n}" for n in range(41, 41 + COUNT)]
    for week in weeks:
        await settled(runtime, "inbox", "digests")
        await runtime.digest_builder().run(BuildDigest(week=week, now=due_at(week)))
    await settled(runtime, "digests")
    pages = await walk(client, "/factory/feedback/digests", keys.a)
    assert [len(page) for page in pages] == [2, 2, 1]
    assert keyed(pages, "week") == list(reversed(weeks))


async def test_proposals_come_in_pages_in_their_ranked_order(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    runtime.start_projections(["learning_proposals"])
    tenant = tenant_of(keys, 0)
    for target in range(COUNT):
        extra = target % 2  # evidence counts 3 and 4: the order is not the raising order
        for n in range(3 + extra):
            evaluation = failed_evaluation(target * 10 + n, target=f"agent-{target}")
            await neighbour(runtime, tenant, evaluation, f"ce-{target}-{n}")
    report = await generator(runtime).run(ORDER)
    assert len(report.raised) == COUNT
    await settled(runtime, "learning_proposals")
    pages = await walk(client, "/factory/learning/proposals", keys.a)
    assert [len(page) for page in pages] == [2, 2, 1]
    whole = (await client.get("/factory/learning/proposals", params={"limit": "200"})).json()
    assert keyed(pages, "proposalId") == keyed([whole["items"]], "proposalId")
    assert sorted(keyed(pages, "proposalId")) == sorted(str(p) for p in report.raised)
    counts = [len(item["evidence"]) for item in whole["items"]]
    assert counts == sorted(counts, reverse=True)
    filtered = await walk(client, "/factory/learning/proposals", keys.a, target="agent-1")
    assert [len(page) for page in filtered] == [1]


async def test_proposal_pages_go_on_across_an_evidence_count_group(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    """Counts 4, 4, 4, 3, 3 in pages of two: the first page's cursor sits inside the group of
    4, the second page holds the last 4 and the first 3 (C36; ties by id, as they were raised
    at one instant and serve no charter line)."""
    runtime.start_projections(["learning_proposals"])
    tenant = tenant_of(keys, 0)
    counts = {f"agent-{target}": 4 if target < 3 else 3 for target in range(COUNT)}
    for target, (agent, count) in enumerate(counts.items()):
        for n in range(count):
            evaluation = failed_evaluation(target * 10 + n, target=agent)
            await neighbour(runtime, tenant, evaluation, f"ce-{target}-{n}")
    report = await generator(runtime).run(ORDER)
    assert len(report.raised) == COUNT
    await settled(runtime, "learning_proposals")
    pages = await walk(client, "/factory/learning/proposals", keys.a)
    assert [[len(item["evidence"]) for item in page] for page in pages] == [[4, 4], [4, 3], [3]]
    listed = [(-len(item["evidence"]), item["proposalId"]) for page in pages for item in page]
    assert listed == sorted(listed)
    assert sorted(pid for _, pid in listed) == sorted(str(p) for p in report.raised)


async def test_eval_cases_come_in_pages_by_agent_then_ref(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    runtime.start_projections(["eval_cases"])
    tenant = tenant_of(keys, 0)
    at = datetime(2026, 11, 20, tzinfo=UTC)
    for n in range(COUNT):  # two agents: a page ends inside one and the next goes on
        report = await submit(runtime, tenant, at, agent=(COACH, WRITER)[n % 2])
        await send(runtime, tenant, LiftEvalCase(source=report), at)
    await settled(runtime, "eval_cases")
    pages = await walk(client, "/factory/evals/cases", keys.a)
    assert [len(page) for page in pages] == [2, 2, 1]
    listed = [(case["agent"], case["ref"]) for page in pages for case in page]
    assert listed == sorted(listed)
    assert len(set(listed)) == COUNT
    whole = (await client.get("/factory/evals/cases")).json()
    assert [(case["agent"], case["ref"]) for case in whole["items"]] == listed
    assert whole["next"] is None
    coach = await walk(client, "/factory/evals/cases", keys.a, agent=listed[0][0])
    assert [len(page) for page in coach] == [2, 1]
    cursor = (await client.get("/factory/evals/cases", params={"limit": "1"})).json()["next"]
    for refused in (
        await client.get("/factory/evaluation/datasets", params={"before": cursor}),
        await client.get(
            "/factory/evals/cases",
            params={"before": cursor},
            headers={"Authorization": f"Bearer {keys.b}"},
        ),
    ):
        assert (refused.status_code, refused.json()["field"]) == (422, "before")


async def test_a_cursor_of_another_list_or_tenant_is_refused_naming_before(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    runtime.start_projections(["datasets"])
    tenant = tenant_of(keys, 0)
    for n in range(3):
        await harvest(runtime, tenant, run_event(f"r-{n}", "urn:in", agentId=f"agent-{n}"), f"{n}")
    await settled(runtime, "datasets")
    page = (await client.get("/factory/evaluation/datasets", params={"limit": "1"})).json()
    cursor = page["next"]
    assert cursor is not None
    for route in ("/factory/evals/nights", "/factory/feedback/digests"):
        other_list = await client.get(route, params={"before": cursor})
        assert (other_list.status_code, other_list.json()["field"]) == (422, "before")
    other_tenant = await client.get(
        "/factory/evaluation/datasets",
        params={"before": cursor},
        headers={"Authorization": f"Bearer {keys.b}"},
    )
    assert (other_tenant.status_code, other_tenant.json()["field"]) == (422, "before")
    for route in LISTS:  # one bound on every list (services.edge.parameters.Limit)
        for limit in ("0", "201"):
            refused = await client.get(route, params={"limit": limit})
            assert (refused.status_code, refused.json()["field"]) == (422, "limit")


async def test_a_cursor_of_one_kind_given_where_the_other_is_read_is_refused_naming_its_field(
    runtime: Runtime, client: httpx.AsyncClient, keys: Keys
) -> None:
    """D13: a list sorted by a key (datasets) and a list sorted by position (feedback, the
    Inbox) seal their cursors alike. A sort key's cursor opened as a position was read as a
    number past 64 bits and failed the database's statement (500); a position opened as a sort
    key failed to decode as UTF-8 (500). Each is a cursor of another list: 422 naming it."""
    runtime.start_projections(["datasets", "feedback_list", "inbox"])
    tenant = tenant_of(keys, 0)
    for n in range(2):
        await harvest(runtime, tenant, run_event(f"r-{n}", "urn:in", agentId=f"agent-{n}"), f"{n}")
    await settled(runtime, "datasets")
    page = (await client.get("/factory/evaluation/datasets", params={"limit": "1"})).json()
    sort_key_cursor = page["next"]
    assert sort_key_cursor is not None
    for route in ("/factory/feedback", "/factory/reports/inbox"):
        refused = await client.get(route, params={"before": sort_key_cursor})
        assert (refused.status_code, refused.json()["field"]) == (422, "before"), refused.text
    waited = await client.get("/factory/feedback", params={"minPosition": sort_key_cursor})
    assert (waited.status_code, waited.json()["field"]) == (422, "minPosition"), waited.text
    position_cursor = runtime.positions.seal(200, tenant)  # 0xC8: no UTF-8 text
    for route in ("/factory/evaluation/datasets", "/factory/evals/nights"):
        refused = await client.get(route, params={"before": position_cursor})
        assert (refused.status_code, refused.json()["field"]) == (422, "before"), refused.text
