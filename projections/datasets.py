"""Datasets by tenant: harvested runs, corrections, validations, curation and versions
(SPEC C13–C25).

Answers ``GET /factory/evaluation/datasets`` and the task set a snapshot is taken of
(``dataset_tasks``); every query is filtered by tenant (C16, C51). Corrections are feedback
events (kind correction on a run), kept whether or not their run is known yet: a task is
composed from the tables when it is read, so either order gives the same task.
"""

from collections.abc import Sequence
from typing import Any
from uuid import UUID

import asyncpg

from contracts.datasets import dataset_target
from projections import events as ev
from projections.dataset_tasks import compose_rows
from projections.read_model import insert_rows
from services.followers.reader import Connection, Positioned

SCHEMA = "rm_datasets"

CORRECTIONS = ("tenant_id", "feedback_id", "run_id", "corrected_ref", "given_at")


class Datasets:
    name = "datasets"
    insert_only = ("corrections",)  # a rebuild adds its key after loading
    order_free = (ev.FEEDBACK_RECORDED,)  # a correction or nothing: loaded apart
    handles = (
        ev.RUN_HARVESTED,
        ev.VALIDATION_RECORDED,
        ev.FEEDBACK_RECORDED,
        ev.DATASET_OPENED,
        ev.DATASET_TASK_CURATED,
        ev.DATASET_TASK_REMOVED,
        ev.DATASET_VERSION_PUBLISHED,
        ev.DATASET_SHARE_CONSENTED,
        ev.DATASET_VERSION_SHARED,
    )

    def ddl(self, schema: str) -> str:
        return f"""
        CREATE TABLE IF NOT EXISTS {schema}.runs (
            tenant_id text NOT NULL, run_id text NOT NULL, dataset_id text NOT NULL,
            task_id text NOT NULL, agent_id text NOT NULL, agent_version text,
            input_ref text NOT NULL, output_ref text, scoring_rule text NOT NULL,
            completed_at timestamptz NOT NULL, PRIMARY KEY (tenant_id, run_id)
        );
        CREATE TABLE IF NOT EXISTS {schema}.corrections (
            tenant_id text NOT NULL, feedback_id uuid NOT NULL, run_id text NOT NULL,
            corrected_ref text NOT NULL, given_at timestamptz NOT NULL,
            PRIMARY KEY (tenant_id, feedback_id)
        );
        CREATE TABLE IF NOT EXISTS {schema}.validations (
            tenant_id text NOT NULL, validation_id uuid NOT NULL, artifact_ref text NOT NULL,
            run_id text, validator text NOT NULL, outcome text NOT NULL, findings int NOT NULL,
            validated_at timestamptz NOT NULL, PRIMARY KEY (tenant_id, validation_id)
        );
        CREATE TABLE IF NOT EXISTS {schema}.curated (
            tenant_id text NOT NULL, dataset_id text NOT NULL, task_id text NOT NULL,
            input_ref text NOT NULL, expected_ref text NOT NULL, scoring_rule text NOT NULL,
            curated_by text NOT NULL, PRIMARY KEY (tenant_id, dataset_id, task_id)
        );
        CREATE TABLE IF NOT EXISTS {schema}.removed (
            tenant_id text NOT NULL, dataset_id text NOT NULL, task_id text NOT NULL,
            PRIMARY KEY (tenant_id, dataset_id, task_id)
        );
        CREATE TABLE IF NOT EXISTS {schema}.datasets (
            tenant_id text NOT NULL, dataset_id text NOT NULL, name text NOT NULL,
            target text NOT NULL, classification text NOT NULL,
            PRIMARY KEY (tenant_id, dataset_id)
        );
        CREATE TABLE IF NOT EXISTS {schema}.versions (
            tenant_id text NOT NULL, dataset_id text NOT NULL, version int NOT NULL,
            snapshot_ref text NOT NULL, task_count int NOT NULL, classification text NOT NULL,
            published_at timestamptz NOT NULL, position bigint NOT NULL,
            PRIMARY KEY (tenant_id, dataset_id, version)
        );
        CREATE TABLE IF NOT EXISTS {schema}.consents (
            tenant_id text NOT NULL, dataset_key uuid NOT NULL, to_tenant text NOT NULL,
            consented_by text NOT NULL, consented_at timestamptz NOT NULL,
            PRIMARY KEY (tenant_id, dataset_key, to_tenant)
        );
        CREATE TABLE IF NOT EXISTS {schema}.shares (
            tenant_id text NOT NULL, dataset_key uuid NOT NULL, version int NOT NULL,
            to_tenant text NOT NULL, shared_by text NOT NULL, shared_at timestamptz NOT NULL,
            PRIMARY KEY (tenant_id, dataset_key, version, to_tenant)
        );
        """

    def indexes(self, schema: str) -> str:
        """Secondary indexes, for reads only (every write goes by a primary key): a rebuild
        makes them once after loading (``services.projecting.runner``)."""
        return f"""
        CREATE INDEX IF NOT EXISTS runs_by_dataset ON {schema}.runs (tenant_id, dataset_id);
        CREATE INDEX IF NOT EXISTS corrections_by_run ON {schema}.corrections (tenant_id, run_id);
        """

    async def apply(self, conn: Connection, schema: str, batch: Sequence[Positioned]) -> None:
        # Corrections are only ever inserted, and nothing else in the batch reads them: they
        # are written together at the end (a catch-up's pages are mostly feedback).
        corrections: list[tuple[Any, ...]] = []
        for p in batch:
            e = p.event
            match ev.topic_of(e):
                case ev.FEEDBACK_RECORDED:
                    if e.kind != "correction" or e.subject_kind != "run":
                        continue
                    if e.corrected_artifact_ref is None:
                        continue
                    corrections.append((
                        e.tenant_id, e.originator_id, e.subject_ref, e.corrected_artifact_ref,
                        e.timestamp,
                    ))  # fmt: skip
                case ev.RUN_HARVESTED:
                    run = e.run
                    await conn.execute(
                        f"INSERT INTO {schema}.runs VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, "
                        "$10) ON CONFLICT DO NOTHING",
                        e.tenant_id, run.run_id, e.dataset_id, e.task_id, run.agent_id,
                        run.agent_version, e.input_ref, e.expected_ref, e.scoring_rule,
                        run.completed_at,
                    )  # fmt: skip
                case ev.VALIDATION_RECORDED:
                    await conn.execute(
                        f"INSERT INTO {schema}.validations VALUES ($1, $2, $3, $4, $5, $6, $7, "
                        "$8) ON CONFLICT DO NOTHING",
                        e.tenant_id, e.originator_id, e.artifact_ref, e.run_id, e.validator,
                        e.outcome, e.findings, e.validated_at,
                    )  # fmt: skip
                case ev.DATASET_OPENED:
                    await conn.execute(
                        f"INSERT INTO {schema}.datasets VALUES ($1, $2, $3, $4, $5) "
                        "ON CONFLICT DO NOTHING",
                        e.tenant_id, e.dataset_id, e.name, e.target, e.classification,
                    )  # fmt: skip
                case ev.DATASET_TASK_CURATED:
                    dataset_id = e.dataset_id
                    await conn.execute(
                        f"INSERT INTO {schema}.curated VALUES ($1, $2, $3, $4, $5, $6, $7) "
                        "ON CONFLICT (tenant_id, dataset_id, task_id) DO UPDATE SET "
                        "input_ref = $4, expected_ref = $5, scoring_rule = $6, curated_by = $7",
                        e.tenant_id, dataset_id, e.task_id, e.input_ref, e.expected_ref,
                        e.scoring_rule, e.curated_by,
                    )  # fmt: skip
                    await conn.execute(
                        f"DELETE FROM {schema}.removed WHERE tenant_id = $1 AND dataset_id = $2 "
                        "AND task_id = $3",
                        e.tenant_id, dataset_id, e.task_id,
                    )  # fmt: skip
                case ev.DATASET_TASK_REMOVED:
                    dataset_id = e.dataset_id
                    await conn.execute(
                        f"DELETE FROM {schema}.curated WHERE tenant_id = $1 AND dataset_id = $2 "
                        "AND task_id = $3",
                        e.tenant_id, dataset_id, e.task_id,
                    )  # fmt: skip
                    await conn.execute(
                        f"INSERT INTO {schema}.removed VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                        e.tenant_id, dataset_id, e.task_id,
                    )  # fmt: skip
                case ev.DATASET_VERSION_PUBLISHED:
                    await conn.execute(
                        f"INSERT INTO {schema}.versions VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
                        "ON CONFLICT DO NOTHING",
                        e.tenant_id, e.dataset_id, e.version, e.snapshot_ref, e.task_count,
                        e.classification, e.timestamp, p.position,
                    )  # fmt: skip
                # A consent and a share name their dataset by its aggregate's id only (the
                # events carry no dataset id): kept by that key, which the reader derives.
                case ev.DATASET_SHARE_CONSENTED:
                    await conn.execute(
                        f"INSERT INTO {schema}.consents VALUES ($1, $2, $3, $4, $5) "
                        "ON CONFLICT DO NOTHING",
                        e.tenant_id, e.originator_id, e.to_tenant, e.consented_by, e.timestamp,
                    )  # fmt: skip
                case ev.DATASET_VERSION_SHARED:
                    await conn.execute(
                        f"INSERT INTO {schema}.shares VALUES ($1, $2, $3, $4, $5, $6) "
                        "ON CONFLICT DO NOTHING",
                        e.tenant_id, e.originator_id, e.version, e.to_tenant, e.shared_by,
                        e.timestamp,
                    )  # fmt: skip
                case _:
                    raise TypeError(f"datasets do not handle {type(e).__name__}")
        await insert_rows(conn, f"{schema}.corrections", CORRECTIONS, corrections, conflict="")


async def dataset_tasks(
    pool: asyncpg.Pool, tenant_id: str, dataset_id: str, schema: str = SCHEMA
) -> list[dict[str, Any]]:
    """The tasks a snapshot of the dataset taken now holds, sorted by ``taskId``."""
    async with pool.acquire() as conn:
        runs = await conn.fetch(
            f"SELECT * FROM {schema}.runs WHERE tenant_id = $1 AND dataset_id = $2",
            tenant_id,
            dataset_id,
        )
        run_ids = [r["run_id"] for r in runs]
        corrections = await conn.fetch(
            f"SELECT * FROM {schema}.corrections WHERE tenant_id = $1 AND run_id = ANY($2)",
            tenant_id,
            run_ids,
        )
        curated = await conn.fetch(
            f"SELECT * FROM {schema}.curated WHERE tenant_id = $1 AND dataset_id = $2",
            tenant_id,
            dataset_id,
        )
        refs = {r["input_ref"] for r in runs} | {r["output_ref"] for r in runs}
        refs |= {r["corrected_ref"] for r in corrections}
        refs |= {r["input_ref"] for r in curated} | {r["expected_ref"] for r in curated}
        checks = await conn.fetch(
            f"SELECT * FROM {schema}.validations WHERE tenant_id = $1 "
            "AND (run_id = ANY($2) OR artifact_ref = ANY($3))",
            tenant_id,
            run_ids,
            [ref for ref in refs if ref is not None],
        )
        removed = await conn.fetch(
            f"SELECT task_id FROM {schema}.removed WHERE tenant_id = $1 AND dataset_id = $2",
            tenant_id,
            dataset_id,
        )
    return compose_rows(runs, corrections, checks, curated, [r["task_id"] for r in removed])


async def task_page(
    pool: asyncpg.Pool,
    tenant_id: str,
    dataset_id: str,
    *,
    after: str | None = None,
    limit: int = 50,
    schema: str = SCHEMA,
) -> tuple[list[dict[str, Any]], str | None]:
    """``dataset_tasks`` a page at a time: those whose id sorts after ``after``, at most
    ``limit``, and the id to pass as ``after`` for the next page (None on the last). The
    tasks are composed whole before the cut (a task is composed when it is read)."""
    tasks = await dataset_tasks(pool, tenant_id, dataset_id, schema)
    later = [task for task in tasks if after is None or task["taskId"] > after]
    page = later[:limit]
    return page, (page[-1]["taskId"] if len(later) > limit else None)


async def get_version(
    pool: asyncpg.Pool, tenant_id: str, dataset_id: str, version: int, schema: str = SCHEMA
) -> dict[str, Any] | None:
    row = await pool.fetchrow(
        f"SELECT * FROM {schema}.versions WHERE tenant_id = $1 AND dataset_id = $2 "
        "AND version = $3",
        tenant_id,
        dataset_id,
        version,
    )
    return None if row is None else version_json(row)


def version_json(row: asyncpg.Record) -> dict[str, Any]:
    return {
        "version": row["version"],
        "taskCount": row["task_count"],
        "classification": row["classification"],
        "snapshotRef": row["snapshot_ref"],
        "publishedAt": row["published_at"].isoformat(),
    }


async def list_datasets(
    pool: asyncpg.Pool,
    tenant_id: str,
    *,
    after: str | None = None,
    limit: int = 50,
    schema: str = SCHEMA,
    only: str | None = None,
) -> tuple[list[dict[str, Any]], str | None]:
    """The tenant's datasets (harvested, curated or published), with versions, task counts
    and classification (C21), by id, a page at a time: those after the id ``after``, at most
    ``limit``; and the id to pass as ``after`` for the next page (None on the last).
    ``only``: that one dataset, if the tenant has it."""
    rows = await pool.fetch(
        f"SELECT dataset_id FROM (SELECT dataset_id FROM {schema}.runs WHERE tenant_id = $1 "
        f"UNION SELECT dataset_id FROM {schema}.datasets WHERE tenant_id = $1) AS ids "
        "WHERE ($2::text IS NULL OR dataset_id > $2) AND ($4::text IS NULL OR dataset_id = $4) "
        "ORDER BY 1 LIMIT $3",
        tenant_id,
        after,
        limit + 1,
        only,
    )
    ids = [r["dataset_id"] for r in rows]
    page, next_after = ids[:limit], (ids[limit - 1] if len(ids) > limit else None)
    known = {
        r["dataset_id"]: r
        for r in await pool.fetch(
            f"SELECT * FROM {schema}.datasets WHERE tenant_id = $1 AND dataset_id = ANY($2)",
            tenant_id,
            page,
        )
    }
    versions: dict[str, list[dict[str, Any]]] = {}
    for row in await pool.fetch(
        f"SELECT * FROM {schema}.versions WHERE tenant_id = $1 AND dataset_id = ANY($2) "
        "ORDER BY dataset_id, version",
        tenant_id,
        page,
    ):
        versions.setdefault(row["dataset_id"], []).append(version_json(row))
    items = []
    for dataset_id in page:
        opened = known.get(dataset_id)
        items.append(
            {
                "datasetId": dataset_id,
                "name": opened["name"] if opened else dataset_id,
                "target": opened["target"] if opened else dataset_target(dataset_id),
                "classification": opened["classification"] if opened else "tenant-confidential",
                "candidates": len(await dataset_tasks(pool, tenant_id, dataset_id, schema)),
                "versions": versions.get(dataset_id, []),
            }
        )
    return items, next_after


async def get_dataset(
    pool: asyncpg.Pool, tenant_id: str, dataset_id: str, schema: str = SCHEMA
) -> dict[str, Any] | None:
    """One dataset of the tenant as ``list_datasets`` lists it; None if the tenant has none
    of that id (another tenant's is not found either, C16)."""
    found, _ = await list_datasets(pool, tenant_id, after=None, limit=1, schema=schema,
                                   only=dataset_id)  # fmt: skip
    return found[0] if found else None


async def dataset_sharing(
    pool: asyncpg.Pool, tenant_id: str, dataset_key: UUID, schema: str = SCHEMA
) -> dict[str, list[dict[str, Any]]]:
    """SPEC C17: the consents the tenant recorded to share the dataset (``dataset_key``: its
    aggregate's id) and the versions it shared, each with who and when, oldest first."""
    consents = await pool.fetch(
        f"SELECT * FROM {schema}.consents WHERE tenant_id = $1 AND dataset_key = $2 "
        "ORDER BY consented_at, to_tenant",
        tenant_id,
        dataset_key,
    )
    shares = await pool.fetch(
        f"SELECT * FROM {schema}.shares WHERE tenant_id = $1 AND dataset_key = $2 "
        "ORDER BY version, shared_at, to_tenant",
        tenant_id,
        dataset_key,
    )
    return {
        "consents": [
            {"toTenant": r["to_tenant"], "by": r["consented_by"],
             "at": r["consented_at"].isoformat()}
            for r in consents
        ],
        "shares": [
            {"version": r["version"], "toTenant": r["to_tenant"], "by": r["shared_by"],
             "at": r["shared_at"].isoformat()}
            for r in shares
        ],
    }  # fmt: skip


async def count_published_datasets(
    pool: asyncpg.Pool, schema: str = SCHEMA
) -> list[tuple[str, str, int]]:
    """SPEC C50: how many datasets with a published version each tenant has, by target."""
    rows = await pool.fetch(
        f"SELECT d.tenant_id, d.target, count(*) AS n FROM {schema}.datasets d "
        f"WHERE EXISTS (SELECT 1 FROM {schema}.versions v "
        "WHERE v.tenant_id = d.tenant_id AND v.dataset_id = d.dataset_id) "
        "GROUP BY d.tenant_id, d.target"
    )
    return [(row["tenant_id"], row["target"], row["n"]) for row in rows]
