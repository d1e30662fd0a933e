"""Learning proposals by state, kind and target, with evidence and expected effect (C36).

Answers ``GET /factory/learning/proposals`` and ``GET /factory/learning/proposals/{id}``;
tenant-scoped (C51); the appraisal context's ``proposal_wait`` sensor asks ``undecided``. Only
event data is used, so a rebuild reproduces the view.

The evidence clusters the ProposalGenerator reads (``projections.evidence_clusters``, which
owns their tables and queries) run on this read model's reader, in its schema: one reader of
the log, one connection, for the learning context's read models (decisions D57).
"""

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

import asyncpg

from contracts.goals import GoalKind, read_goal_refs
from projections import events as ev
from projections.evidence_clusters import EvidenceClusters
from services.followers.reader import Connection, Positioned

SCHEMA = "rm_learning_proposals"
OWN = frozenset(
    (
        ev.PROPOSAL_RAISED,
        ev.PROPOSAL_PICKED_UP,
        ev.PROPOSAL_ACCEPTED,
        ev.PROPOSAL_APPROVED,
        ev.PROPOSAL_REJECTED,
        ev.PROPOSAL_SUPERSEDED,
        ev.PROPOSAL_RELEASE_RECORDED,
    )
)
CLUSTERS = EvidenceClusters()
CLUSTER_TOPICS = frozenset(CLUSTERS.handles)


class LearningProposals:
    name = "learning_proposals"
    handles = tuple(sorted(OWN | CLUSTER_TOPICS))
    staged = CLUSTERS.staged  # the clusters' feedback, in a rebuild (decisions D70)

    def ddl(self, schema: str) -> str:
        return f"""
        CREATE TABLE IF NOT EXISTS {schema}.learning_proposals (
            proposal_id uuid PRIMARY KEY,
            tenant_id text NOT NULL,
            kind text NOT NULL,
            target_asset_id text NOT NULL,
            target_version text,
            state text NOT NULL,
            raised_at timestamptz NOT NULL,
            decided_at timestamptz,
            reviewed_by text,
            reason text,
            superseded_by uuid,
            resulting_release_id text,
            approved boolean NOT NULL DEFAULT false,
            summary_ref text NOT NULL,
            evidence_hash text NOT NULL,
            evidence_count int NOT NULL,
            evidence jsonb NOT NULL,
            expected_effect jsonb,
            profile text NOT NULL,
            position bigint NOT NULL
        );
        """ + CLUSTERS.ddl(schema)

    def indexes(self, schema: str) -> str:
        """A secondary index, for reads only (every write goes by the primary key): a rebuild
        makes it once after loading (``services.projecting.runner``)."""
        return f"""
        CREATE INDEX IF NOT EXISTS learning_proposals_by_tenant
            ON {schema}.learning_proposals (tenant_id, state, kind, target_asset_id);
        CREATE INDEX IF NOT EXISTS learning_proposals_by_count
            ON {schema}.learning_proposals (tenant_id, evidence_count DESC);
        """ + CLUSTERS.indexes(schema)

    async def apply(self, conn: Connection, schema: str, batch: Sequence[Positioned]) -> None:
        await self.apply_own(conn, schema, [p for p in batch if ev.topic_of(p.event) in OWN])
        clustered = [p for p in batch if CLUSTERS.takes(p.event)]
        if clustered:  # other tables: the order between the two parts does not matter
            await CLUSTERS.apply(conn, schema, clustered)

    async def apply_own(self, conn: Connection, schema: str, batch: Sequence[Positioned]) -> None:
        table = f"{schema}.learning_proposals"
        for p in batch:
            e = p.event
            topic = ev.topic_of(e)
            match topic:
                case ev.PROPOSAL_RAISED:
                    await conn.execute(
                        f"INSERT INTO {table} (proposal_id, tenant_id, kind, target_asset_id, "
                        "target_version, state, raised_at, summary_ref, evidence_hash, "
                        "evidence_count, evidence, expected_effect, profile, position) VALUES "
                        "($1, $2, $3, $4, $5, 'Proposed', $6, $7, $8, $9, $10, $11, $12, $13) "
                        "ON CONFLICT DO NOTHING",
                        e.originator_id, e.tenant_id, e.kind, e.target_asset_id,
                        e.target_version, e.timestamp, e.summary_ref, e.evidence_hash,
                        len(e.evidence), json.dumps(e.evidence),
                        None if e.expected_effect is None else json.dumps(e.expected_effect),
                        e.profile, p.position,
                    )  # fmt: skip
                case ev.PROPOSAL_PICKED_UP:
                    await conn.execute(
                        f"UPDATE {table} SET state = 'InReview', reviewed_by = $2, position = $3 "
                        "WHERE proposal_id = $1",
                        e.originator_id, e.reviewed_by, p.position,
                    )  # fmt: skip
                case ev.PROPOSAL_APPROVED:  # decisions D54: still InReview, decided
                    await conn.execute(
                        f"UPDATE {table} SET approved = true, reviewed_by = $2, "
                        "decided_at = $3, position = $4 WHERE proposal_id = $1",
                        e.originator_id, e.reviewed_by, e.timestamp, p.position,
                    )  # fmt: skip
                case ev.PROPOSAL_ACCEPTED | ev.PROPOSAL_REJECTED:
                    state = "Accepted" if topic == ev.PROPOSAL_ACCEPTED else "Rejected"
                    await conn.execute(
                        f"UPDATE {table} SET state = $2, reviewed_by = $3, decided_at = $4, "
                        "reason = $5, position = $6 WHERE proposal_id = $1",
                        e.originator_id, state, e.reviewed_by, e.timestamp,
                        getattr(e, "reason", None), p.position,
                    )  # fmt: skip
                case ev.PROPOSAL_SUPERSEDED:
                    await conn.execute(
                        f"UPDATE {table} SET state = 'Superseded', decided_at = $2, "
                        "superseded_by = $3, position = $4 WHERE proposal_id = $1",
                        e.originator_id, e.timestamp, UUID(e.superseded_by), p.position,
                    )  # fmt: skip
                case ev.PROPOSAL_RELEASE_RECORDED:
                    await conn.execute(
                        f"UPDATE {table} SET resulting_release_id = $2, state = 'Accepted', "
                        "position = $3 WHERE proposal_id = $1",
                        e.originator_id, e.release_id, p.position,
                    )  # fmt: skip
                case _:
                    raise TypeError(f"learning proposals do not handle {type(e).__name__}")


def charter_line(item: dict[str, Any], lines: Sequence[str]) -> str | None:
    """The highest-ranked line of ``lines`` (the charter, in rank order) that the proposal's
    evidence serves; a ``charter:`` reference to a line the charter lacks counts for none
    (M19), a malformed one is no reference (M05)."""
    serves = [row.get("serves") for row in item["evidence"]]
    return served_line([ref for refs in serves if isinstance(refs, list) for ref in refs], lines)


def served_line(serves: list[Any], lines: Sequence[str]) -> str | None:
    """``charter_line`` of the evidence's goal references, all together."""
    served = {ref.id for ref in read_goal_refs(serves) if ref.kind is GoalKind.charter}
    return next((line for line in lines if line in served), None)


# A proposal's place in the list: most evidence first (a negative count); ties by the rank of
# the charter line its evidence serves (M21; a proposal serving no line after those that do),
# then by raisedAt (oldest first), then by id, so that the order is total and pages neither
# miss nor repeat one. Without a charter, ties go by raisedAt.
ProposalKey = tuple[int, int, datetime, str]
# Each evidence item's ``serves`` where it is a list, all together (as ``charter_line`` reads).
SERVES_PATH = 'strict $[*] ? (exists (@.serves)).serves ? (@.type() == "array")[*]'


async def list_proposals(
    pool: asyncpg.Pool,
    tenant_id: str,
    *,
    state: str | None = None,
    kind: str | None = None,
    target: str | None = None,
    charter: Sequence[str] = (),
    after: ProposalKey | None = None,
    limit: int = 50,
    schema: str = SCHEMA,
) -> tuple[list[dict[str, Any]], ProposalKey | None]:
    """C36: the tenant's proposals, filtered by state, kind and target, in ``ProposalKey`` order
    by the tenant's ``charter`` (its line ids, in rank order), a page at a time: those after
    the key ``after``, at most ``limit``; and the key to pass as ``after`` for the next page
    (None on the last). The first sort key, the evidence count, is SQL's: the keys are read
    most evidence first, from the cursor's count down, only until the page is full and its
    last count group is whole; the charter rank (M21) only orders ties within one count, so it
    is made here, a count group at a time. Only the page's proposals are read whole."""
    keys = await ranked_keys(
        pool, tenant_id, (state, kind, target), charter, after, limit + 1, schema
    )
    page = keys[:limit]
    found = {
        str(row["proposal_id"]): row
        for row in await pool.fetch(
            f"SELECT * FROM {schema}.learning_proposals WHERE tenant_id = $1 "
            "AND proposal_id = ANY($2::uuid[])",
            tenant_id,
            [key[3] for key in page],
        )
    }
    items = [proposal_json(found[key[3]], charter) for key in page]
    return items, (page[-1] if len(keys) > limit else None)


async def ranked_keys(
    pool: asyncpg.Pool,
    tenant_id: str,
    filters: tuple[str | None, str | None, str | None],
    charter: Sequence[str],
    after: ProposalKey | None,
    wanted: int,
    schema: str,
) -> list[ProposalKey]:
    """The ``ProposalKey``s after ``after``, in order: at least ``wanted`` of them when there
    are as many, read a count group at a time (memory: ``wanted`` and one group)."""
    rank = {line: n for n, line in enumerate(charter)}
    keys: list[ProposalKey] = []
    group: list[ProposalKey] = []

    def close_group() -> None:
        keys.extend(key for key in sorted(group) if after is None or key > after)
        group.clear()

    query = (
        "SELECT proposal_id, evidence_count, raised_at, "
        f"jsonb_path_query_array(evidence, '{SERVES_PATH}') AS serves "
        f"FROM {schema}.learning_proposals WHERE tenant_id = $1 "
        "AND ($2::text IS NULL OR state = $2) AND ($3::text IS NULL OR kind = $3) "
        "AND ($4::text IS NULL OR target_asset_id = $4) "
        "AND ($5::int IS NULL OR evidence_count <= $5) ORDER BY evidence_count DESC"
    )
    most = None if after is None else -after[0]
    async with pool.acquire() as conn, conn.transaction(readonly=True):
        async for row in conn.cursor(query, tenant_id, *filters, most, prefetch=wanted):
            key = (-row["evidence_count"], line_rank(json.loads(row["serves"]), charter, rank),
                   row["raised_at"], str(row["proposal_id"]))  # fmt: skip
            if group and key[0] != group[0][0]:
                close_group()
                if len(keys) >= wanted:
                    return keys
            group.append(key)
    close_group()
    return keys


def line_rank(serves: list[Any], charter: Sequence[str], rank: dict[str, int]) -> int:
    """The rank of the highest charter line the goal references ``serves`` name (M21), as
    ``ProposalKey`` orders by; past every line when they name none."""
    line = served_line(serves, charter)
    return rank.get(line, len(rank)) if line else len(rank)


async def get_proposal(
    pool: asyncpg.Pool,
    tenant_id: str,
    proposal_id: UUID,
    *,
    charter: Sequence[str] = (),
    schema: str = SCHEMA,
) -> dict[str, Any] | None:
    row = await pool.fetchrow(
        f"SELECT * FROM {schema}.learning_proposals WHERE tenant_id = $1 AND proposal_id = $2",
        tenant_id,
        proposal_id,
    )
    return None if row is None else proposal_json(row, charter)


def proposal_json(row: asyncpg.Record, charter: Sequence[str] = ()) -> dict[str, Any]:
    evidence = json.loads(row["evidence"])
    effect = row["expected_effect"]
    shown = {
        "proposalId": str(row["proposal_id"]),
        "tenantId": row["tenant_id"],
        "kind": row["kind"],
        "targetAssetId": row["target_asset_id"],
        "targetVersion": row["target_version"],
        "summaryRef": row["summary_ref"],
        "evidenceRefs": [item["evidenceId"] for item in evidence],
        "evidence": evidence,
        "evidenceHash": row["evidence_hash"],
        "expectedEffect": None if effect is None else json.loads(effect),
        "state": row["state"],
        "raisedAt": row["raised_at"].isoformat(),
        "reviewedBy": row["reviewed_by"],
        "decidedAt": row["decided_at"] and row["decided_at"].isoformat(),
        "reason": row["reason"],
        "supersededBy": row["superseded_by"] and str(row["superseded_by"]),
        "resultingReleaseId": row["resulting_release_id"],
        # C53: the agent registry degrades; an accepted proposal says it waits for its release
        # (decisions D54: approved and still InReview, or accepted before that rule).
        "waitingForRelease": (row["approved"] or row["state"] == "Accepted")
        and row["resulting_release_id"] is None,
        "profile": row["profile"],
    }
    return shown | {"charterLine": charter_line(shown, charter)}


async def count_proposals(
    pool: asyncpg.Pool, *, schema: str = SCHEMA
) -> list[tuple[str, str, str, int]]:
    """SPEC C49: how many proposals each tenant has, by kind and state (the proposals gauge)."""
    rows = await pool.fetch(
        f"SELECT tenant_id, kind, state, count(*) AS n FROM {schema}.learning_proposals "
        "GROUP BY tenant_id, kind, state"
    )
    return [(row["tenant_id"], row["kind"], row["state"], row["n"]) for row in rows]


# Proposal states that are decided: anything else still waits for a maintainer.
DECIDED = ("accepted", "rejected", "withdrawn", "superseded")


async def undecided(
    pool: asyncpg.Pool, tenant_id: str, *, schema: str = SCHEMA
) -> tuple[int, datetime | None]:
    """How many of the tenant's proposals wait for a decision, and the oldest one's
    ``raised_at``; one a maintainer approved waits for its release, not for a decision
    (decisions D54). Raises if the table cannot be read (no read model yet)."""
    row = await pool.fetchrow(
        f"SELECT count(*) AS waiting, min(raised_at) AS oldest FROM {schema}.learning_proposals "
        "WHERE tenant_id = $1 AND NOT approved AND NOT (lower(state) = ANY($2::text[]))",
        tenant_id,
        list(DECIDED),
    )
    return (0, None) if row is None else (row["waiting"], row["oldest"])


async def waiting_on_maintainers(
    pool: asyncpg.Pool,
    tenant_id: str,
    targets: Sequence[str],
    *,
    each: int,
    schema: str = SCHEMA,
) -> list[asyncpg.Record]:
    """The proposals of each of ``targets`` that wait for one of its maintainers, oldest
    first, at most ``each`` a target: to be picked up (Proposed), decided (InReview, not yet
    approved) or given its Draft release (approved or accepted, no release recorded; D54):
    ``proposal_id, target_asset_id, kind, state, approved, raised_at`` and ``waiting``, how
    many the target has in all."""
    return await pool.fetch(
        "SELECT * FROM (SELECT proposal_id, target_asset_id, kind, state, approved, raised_at, "
        "row_number() OVER (PARTITION BY target_asset_id ORDER BY raised_at, proposal_id) AS n, "
        "count(*) OVER (PARTITION BY target_asset_id) AS waiting "
        f"FROM {schema}.learning_proposals WHERE tenant_id = $1 "
        "AND target_asset_id = ANY($2::text[]) AND ("
        "(NOT approved AND NOT (lower(state) = ANY($3::text[]))) OR "
        "((approved OR state = 'Accepted') AND resulting_release_id IS NULL "
        "AND lower(state) IN ('inreview', 'accepted')))) numbered "
        "WHERE n <= $4 ORDER BY target_asset_id, n",
        tenant_id, list(targets), list(DECIDED), each,
    )  # fmt: skip
