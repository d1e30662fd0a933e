"""The daily proposal run against the history behind it (part ``proposals`` of ``ops/bench.py``).

A run of the ProposalGenerator reads only the clusters that are ready (the evidence clusters
read model, ``projections/evidence_clusters.py``), so its time should not grow with the
evidence already dealt with. Measured at two sizes of history in the same run, on the same
database: for each, the read model is emptied and seeded by bulk SQL (``INSERT … SELECT
generate_series``; the follower is not what is measured) with ``history`` evidence rows in
clusters of ten, nine in ten spent by a proposal a maintainer took up and the rest cited by
a proposal raised on exactly them (so no history cluster is ready), then ``ready`` fresh
clusters of three unspent items each; the generator's run (structured drafter, proposals
raised through the command bus and their summaries stored) is timed, ``repeats`` times with
new ready clusters each time, and the median kept.

    python ops/bench.py --parts proposals
"""

import asyncio
import json
import statistics
import time
import uuid
from datetime import UTC, date, datetime
from typing import Any

from bench_figures import Bench, Target, console, row

from projections.evidence_clusters import SCHEMA
from services.edge.auth import new_key
from services.followers.waiting import wait_for_position
from services.learning.generator import ProposalGenerator
from services.learning.settings import LearningSettings
from services.processes.bootstrap import Runtime
from services.processes.settings import Settings
from services.scheduling.orders import RaiseProposals

TENANT = "bench-tenant"
CLUSTER = 10  # history items per cluster
HISTORY_REF = "'evaluation:h-' || n"  # SQL: a history item's evidence id
NEW_REF = "'evaluation:' || $2 || '-' || n"  # SQL: a ready item's, of round $2


def item_sql(ref: str) -> str:
    """An EvidenceItem as JSON, built by SQL from the text expression ``ref``."""
    return (
        "jsonb_build_object('evidenceId', " + ref + ", 'origin', 'failed-evaluation', "
        "'metric', 'groundedness', 'value', 0.5, 'baseline', 0.8, 'note', 'gate failed', "
        "'observedAt', '2026-11-30T06:00:00Z')"
    )


async def settled(runtime: Runtime) -> None:
    """Until the read model has applied every event so far (the proposals raised before):
    seeding then takes no lock the follower waits on, and a timed run waits for nothing
    left over from the one before."""
    head = await asyncio.to_thread(runtime.store.recorder.max_notification_id) or 0
    if await wait_for_position(runtime.pool, SCHEMA, head, 60) < head:
        raise RuntimeError(f"{SCHEMA} did not reach {head}")


async def seed_history(runtime: Runtime, history: int) -> None:
    await settled(runtime)
    async with runtime.pool.acquire() as conn, conn.transaction():
        for table in ("evidence", "clusters", "proposals"):
            await conn.execute(f"TRUNCATE {SCHEMA}.{table}")
        await conn.execute(
            f"INSERT INTO {SCHEMA}.evidence (tenant_id, track, evidence_id, target_asset_id, "
            "target_kind, target_version, item, spent) "
            f"SELECT $1, 'improvement', 'evaluation:h-' || n, 'agent-' || (n / {CLUSTER}), "
            f"'agent', 'v1', {item_sql(HISTORY_REF)}, "
            "n % 10 <> 0 FROM generate_series(0, $2 - 1) AS n",
            TENANT, history,
        )  # fmt: skip
        await conn.execute(
            f"INSERT INTO {SCHEMA}.clusters (tenant_id, track, target_asset_id, unspent, "
            "version, raised_version) "
            f"SELECT $1, 'improvement', 'agent-' || c, 1, {CLUSTER + 1}, {CLUSTER + 1} "
            f"FROM generate_series(0, ($2 - 1) / {CLUSTER}) AS c",
            TENANT, history,
        )  # fmt: skip
        await conn.execute(
            f"INSERT INTO {SCHEMA}.proposals SELECT gen_random_uuid(), $1, 'improvement', "
            "'agent-' || c, 'Accepted', ARRAY['evaluation:h-' || c] "
            f"FROM generate_series(0, ($2 - 1) / {CLUSTER}) AS c",
            TENANT, history,
        )  # fmt: skip
    # As a long-lived table is: vacuumed and analysed, not met by autovacuum mid-measurement.
    for table in ("evidence", "clusters", "proposals"):
        await runtime.pool.execute(f"VACUUM ANALYZE {SCHEMA}.{table}")


async def seed_ready(runtime: Runtime, ready: int, round_: str) -> None:
    await runtime.pool.execute(
        f"INSERT INTO {SCHEMA}.evidence (tenant_id, track, evidence_id, target_asset_id, "
        "target_kind, target_version, item) "
        f"SELECT $1, 'improvement', 'evaluation:' || $2 || '-' || n, 'new-' || $2 || '-' || "
        f"(n / 3), 'agent', 'v2', {item_sql(NEW_REF)} "
        "FROM generate_series(0, $3 * 3 - 1) AS n",
        TENANT, round_, ready,
    )  # fmt: skip
    await runtime.pool.execute(
        f"INSERT INTO {SCHEMA}.clusters (tenant_id, track, target_asset_id, unspent, version) "
        "SELECT $1, 'improvement', 'new-' || $2 || '-' || c, 3, 3 "
        "FROM generate_series(0, $3 - 1) AS c",
        TENANT, round_, ready,
    )  # fmt: skip


async def timed_runs(runtime: Runtime, history: int, ready: int, repeats: int) -> dict[str, Any]:
    start = time.perf_counter()
    await seed_history(runtime, history)
    seeded = time.perf_counter() - start
    generator = ProposalGenerator(
        runtime.store, runtime.bus, runtime.pool,
        settings=lambda: LearningSettings.from_environ({}), wait_seconds=60,
    )  # fmt: skip
    seconds = []
    for n in range(repeats):
        await seed_ready(runtime, ready, f"{history}-{n}")
        await settled(runtime)
        order = RaiseProposals(date(2026, 11, 30), datetime.now(UTC))
        start = time.perf_counter()
        report = await generator.run(order)
        seconds.append(time.perf_counter() - start)
        if len(report.raised) != ready:
            raise RuntimeError(f"raised {len(report.raised)} of {ready}: {report}")
    return {
        "history": history,
        "ready_clusters": ready,
        "seed_s": round(seeded, 2),
        "run_s": [round(s, 4) for s in seconds],
        "median_s": statistics.median(seconds),
    }


async def bench_proposals(
    url: str, sizes: tuple[int, ...], ready: int = 10, repeats: int = 7
) -> list[dict[str, Any]]:
    """The median run time at each size of history, in the order given."""
    _, entry = new_key(TENANT, "bench", ["factory.evaluation.read"])
    settings = Settings(database_url=url, api_keys=json.dumps([entry]),
                        topic_prefix=f"b{uuid.uuid4().hex[:8]}.")  # fmt: skip
    runtime = await Runtime.open(settings)
    try:
        runtime.start_projections(["learning_proposals"])
        await asyncio.sleep(1)  # its schema made (the follower applies the raised proposals)
        return [await timed_runs(runtime, size, ready, repeats) for size in sizes]
    finally:
        await runtime.close()


def part_proposals(bench: Bench) -> list[dict[str, Any]]:
    """8. The daily proposal run with 10,000 and with ``--evidence`` evidence events behind it
    (``ops/bench_proposals.py``): flat means at most 50 % more."""
    sizes = (10_000, bench.args.evidence)
    console.print(f"[bold]8.[/] the proposal run with {sizes[0]:,} and {sizes[1]:,} evidence …")
    small, large = asyncio.run(bench_proposals(bench.url, sizes))
    bench.details |= {"proposal_runs": [small, large]}
    ready = small["ready_clusters"]
    return [
        row(
            f"Proposal run, {ready} ready clusters, {sizes[1]:,} evidence events behind it",
            round(large["median_s"] * 1000, 1),
            "ms",
            f"same, {sizes[0]:,} evidence events",
            round(small["median_s"] * 1000, 1),
            Target(1.5, of="ratio", at_most=True),
        ),
    ]
