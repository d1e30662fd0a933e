"""A rebuilt evidence clusters read model equals the live one (SPEC C28, C43; decisions D55,
D57, D70), on a real PostgreSQL: feedback before its subject and after it, a proposal raised
on a cluster and taken up (its evidence spent), feedback after that, and a report. Rebuilt in
one process (the shared pass decodes the feedback) and with two worker processes (they stage
what the clusters take of it; the shared pass hands it to them in log order, in small pieces,
while the workers' small chunks finish out of order): every table, every column, the same
keys and indexes."""

import uuid
from typing import Any

import pytest

import services.projecting.apart
import services.projecting.staged
from contracts.feedback import RecordFeedback
from contracts.learning import PickUpProposal
from projections.learning_proposals import LearningProposals
from services.bus.issued import Issued
from services.followers.positions import read_position
from services.followers.reader import Positioned
from services.processes.bootstrap import Runtime
from services.projecting.rebuild import rebuild_many
from tests.conftest import Keys
from tests.integration.test_digest import tenant_of
from tests.integration.test_learning import NOW, ORDER, generator, visible
from tests.integration.test_learning_evidence_kinds import add_report, feedback, run_completed
from tests.integration.test_rebuild_rows import indexes

TABLES = {  # every table of the read model, every column, in a fixed order
    "learning_proposals": "proposal_id",
    "evidence": "tenant_id, track, evidence_id",
    "clusters": "tenant_id, track, target_asset_id",
    "subjects": "tenant_id, subject_kind, subject_ref",
    "waiting": "tenant_id, evidence_id",
    "reports": "report_id",
    "cases": "case_id",
    "proposals": "proposal_id",
}


async def rows(runtime: Runtime, schema: str) -> dict[str, list[tuple[object, ...]]]:
    found = {}
    for table, order in TABLES.items():
        query = f"SELECT * FROM {schema}.{table} ORDER BY {order}"
        found[table] = [tuple(r.values()) for r in await runtime.pool.fetch(query)]
    return found


async def tables(runtime: Runtime, schema: str) -> list[str]:
    found = await runtime.pool.fetch(
        "SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY tablename", schema
    )
    return [r["tablename"] for r in found]


async def history(runtime: Runtime, tenant: str) -> None:
    """Every way feedback meets the clusters, with a proposal raised and taken up between."""
    await feedback(runtime, tenant, "run", "run-0", kind="escalation")  # waits for its run
    fine = RecordFeedback.model_validate(
        {"projectId": "p", "subjectKind": "run", "subjectRef": "run-0", "kind": "rating",
         "rating": 5}
    )  # fmt: skip
    await runtime.bus.execute(Issued(fine, tenant, "rita", uuid.uuid4().hex, NOW))  # not wrong
    for n in range(3):
        await run_completed(runtime, tenant, n)  # run-0's feedback joins its cluster
    await feedback(runtime, tenant, "run", "run-1")  # a low rating on a known run
    await feedback(runtime, tenant, "attempt", "run-2#1", kind="correction")  # C27 as well
    for n in range(6):  # on runs never harvested: they wait for good
        await feedback(runtime, tenant, "run", f"elsewhere-{n}", kind="escalation")
    report = await generator(runtime).run(ORDER)
    assert report.raised  # a cluster reached MinEvidenceItems (C29)
    pick_up = PickUpProposal(proposal_id=report.raised[0])
    await runtime.bus.execute(Issued(pick_up, tenant, "maria", uuid.uuid4().hex, NOW))
    await feedback(runtime, tenant, "run", "run-1", kind="escalation")  # after the spend
    await feedback(runtime, tenant, "run", "run-3")  # before its run …
    await run_completed(runtime, tenant, 3)  # … which comes after
    await add_report(runtime, tenant, 0)
    await generator(runtime).run(ORDER)


@pytest.mark.parametrize("processes", [1, 2], ids=["together", "staged"])
async def test_a_rebuilt_evidence_clusters_read_model_equals_the_live_one(
    runtime: Runtime, keys: Keys, monkeypatch: pytest.MonkeyPatch, processes: int
) -> None:
    runtime.start_projections(["learning_proposals"])
    await history(runtime, tenant_of(keys))
    await visible(runtime)
    live = "rm_learning_proposals"
    expected = await rows(runtime, live)
    for table in ("evidence", "waiting", "subjects", "clusters", "proposals"):
        assert expected[table], table
    assert any(spent for *_, spent in expected["evidence"])  # the pick-up spent some
    # Workers take chunks of seven positions and the shared pass hands over three staged
    # items at a time: chunks finish out of order, and pages split into many pieces.
    monkeypatch.setattr(services.projecting.apart, "CHUNK", 7)
    monkeypatch.setattr(services.projecting.staged, "PIECE", 3)
    handed: list[int] = []
    take = services.projecting.staged.Handed.take

    async def counted(self: services.projecting.staged.Handed, *args: Any) -> list[Positioned]:
        items = await take(self, *args)
        handed.append(len(items))
        return items

    monkeypatch.setattr(services.projecting.staged.Handed, "take", counted)
    (schema,) = await rebuild_many(
        runtime.store,
        runtime.pool,
        [LearningProposals()],
        swap=False,
        processes=processes,
        database_url=runtime.database_url,
    )
    assert await rows(runtime, schema) == expected
    assert await read_position(runtime.pool, schema) == await read_position(runtime.pool, live)
    assert await tables(runtime, schema) == await tables(runtime, live)
    assert await indexes(runtime, schema) == await indexes(runtime, live)
    # Together, the shared pass decodes the feedback itself; with workers it never does.
    says_wrong = 8 + 2 + 1  # escalations, low ratings, the correction
    assert sum(handed) == (0 if processes == 1 else says_wrong)
