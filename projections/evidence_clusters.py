"""Evidence clusters per (tenant, track, target asset), kept as the log goes (SPEC C28, C40–C43).

Which clusters may raise a proposal now, and their unspent evidence: the ProposalGenerator
reads only these (``ready_clusters``), so a run costs what is new, never the whole history.

Evidence, each item an ``EvidenceItem`` as JSON (the generator validates it; a row that does
not read fails its own cluster only):

- a neighbour's recorded evidence that counts (failed evaluations, drift, skill candidates:
  ``Evidence.Recorded``); drift twice, on the ``improvement`` and the ``re-evaluation`` track
  (C40: it raises both proposals);
- feedback that says something is wrong (a correction, an escalation, a rating of at most
  ``LOW_RATING``) on any subject whose asset is known (decisions D55): an evaluation (its
  target), a run (its agent), an artifact a run produced (the run's agent), an attempt
  (``<runId>#<n>``: its run's agent), a memory (a skill candidate's id: its skill). Feedback on
  a subject not known yet waits in ``waiting`` and joins its cluster when the subject does;
- a correction that carries a corrected artifact on a subject that is no task of the agent's
  dataset (an attempt, an artifact, an evaluation of an agent), on the ``dataset-addition``
  track of that dataset (C27; decisions D55);
- submitted wrong-answer reports naming their agent (a WontFix takes theirs out), and failed
  runs of eval cases.

A proposal a maintainer took up (InReview, Accepted, Rejected) spends the evidence it cites on
its track; evidence cited only by proposals Proposed or Superseded stays. A cluster is
*ready* when it holds at least MinEvidenceItems unspent items and has changed since the last
proposal raised on exactly its unspent evidence (``version > raised_version``): a partial
index holds just those, whatever the history behind them.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import asyncpg

from contracts.datasets import harvested_dataset
from contracts.report_facts import block_of
from projections import events as ev
from projections.evidence_items import (
    DATASET_ADDITION,
    IMPROVEMENT,
    RE_EVALUATION,
    Target,
    agent_asset,
    case_failed,
    case_item,
    feedback_item,
    report_item,
    says_wrong,
    subject_key,
    track_of,
)
from projections.read_model import insert_rows
from services.followers.reader import Connection, Positioned

# It runs on the learning proposals' reader, in their schema (``projections.learning_proposals``).
SCHEMA = "rm_learning_proposals"
WAITING = ("tenant_id", "evidence_id", "subject_kind", "subject_ref", "item", "adds_task")
SPENDING = {  # a proposal's move that spends its evidence, and the state it moves to
    ev.PROPOSAL_PICKED_UP: "InReview",
    ev.PROPOSAL_APPROVED: "InReview",
    ev.PROPOSAL_ACCEPTED: "Accepted",
    ev.PROPOSAL_REJECTED: "Rejected",
    ev.PROPOSAL_RELEASE_RECORDED: "Accepted",
}


class EvidenceClusters:
    """A part of the learning proposals read model: its events, tables and apply."""

    handles = (
        ev.EVIDENCE_RECORDED, ev.FEEDBACK_RECORDED, ev.RUN_HARVESTED, ev.REPORT_DRAFTED,
        ev.REPORT_SUBMITTED, ev.REPORT_HANDED_OVER, ev.REPORT_WONT_FIX, ev.CASE_LIFTED,
        ev.CASE_RUN_RECORDED, ev.PROPOSAL_RAISED, ev.PROPOSAL_SUPERSEDED, *SPENDING,
    )  # fmt: skip

    def ddl(self, schema: str) -> str:
        return f"""
        CREATE TABLE IF NOT EXISTS {schema}.evidence (
            tenant_id text NOT NULL, track text NOT NULL, evidence_id text NOT NULL,
            target_asset_id text NOT NULL, target_kind text NOT NULL, target_version text,
            item jsonb NOT NULL, spent boolean NOT NULL DEFAULT false,
            PRIMARY KEY (tenant_id, track, evidence_id));
        CREATE TABLE IF NOT EXISTS {schema}.clusters (
            tenant_id text NOT NULL, track text NOT NULL, target_asset_id text NOT NULL,
            unspent int NOT NULL, version bigint NOT NULL, raised_version bigint NOT NULL DEFAULT 0,
            PRIMARY KEY (tenant_id, track, target_asset_id));
        CREATE TABLE IF NOT EXISTS {schema}.subjects (
            tenant_id text NOT NULL, subject_kind text NOT NULL, subject_ref text NOT NULL,
            target_asset_id text NOT NULL, target_kind text NOT NULL, target_version text,
            dataset_id text, PRIMARY KEY (tenant_id, subject_kind, subject_ref));
        CREATE TABLE IF NOT EXISTS {schema}.waiting (
            tenant_id text NOT NULL, evidence_id text NOT NULL, subject_kind text NOT NULL,
            subject_ref text NOT NULL, item jsonb NOT NULL, adds_task boolean NOT NULL,
            PRIMARY KEY (tenant_id, evidence_id));
        CREATE INDEX IF NOT EXISTS evidence_unspent ON {schema}.evidence
            (tenant_id, track, target_asset_id) WHERE NOT spent;
        CREATE INDEX IF NOT EXISTS waiting_on ON {schema}.waiting
            (tenant_id, subject_kind, subject_ref);
        CREATE TABLE IF NOT EXISTS {schema}.reports (
            report_id uuid PRIMARY KEY, tenant_id text NOT NULL, agent text NOT NULL,
            kind text);
        CREATE TABLE IF NOT EXISTS {schema}.cases (
            case_id uuid PRIMARY KEY, ref text NOT NULL);
        CREATE TABLE IF NOT EXISTS {schema}.proposals (
            proposal_id uuid PRIMARY KEY, tenant_id text NOT NULL, track text NOT NULL,
            target_asset_id text NOT NULL, state text NOT NULL, evidence_refs text[] NOT NULL);
        """

    def indexes(self, schema: str) -> str:
        """For the generator's reads only (``apply`` uses those of ``ddl``)."""
        return f"""
        CREATE INDEX IF NOT EXISTS clusters_changed ON {schema}.clusters (unspent)
            WHERE version > raised_version;
        CREATE INDEX IF NOT EXISTS proposals_open ON {schema}.proposals
            (tenant_id, track, target_asset_id) WHERE state = 'Proposed';
        """

    async def apply(self, conn: Connection, schema: str, batch: Sequence[Positioned]) -> None:
        feedback: list[Any] = []  # consecutive feedback is looked up and written together
        for p in batch:
            e, topic = p.event, ev.topic_of(p.event)
            if topic == ev.FEEDBACK_RECORDED:
                if says_wrong(e):
                    feedback.append(e)
                continue
            if feedback:  # before anything else: a subject's asset may follow its feedback
                await self.feedback(conn, schema, feedback)
                feedback = []
            if topic == ev.EVIDENCE_RECORDED:
                await self.recorded(conn, schema, e)
            elif topic == ev.RUN_HARVESTED:
                run, agent = e.run, e.run.agent_id
                target = Target(agent_asset(agent), "agent", run.agent_version,
                                harvested_dataset(agent))  # fmt: skip
                await self.subject(conn, schema, e.tenant_id, "run", run.run_id, target)
                if run.output_ref:
                    await self.subject(conn, schema, e.tenant_id, "artifact", run.output_ref,
                                       target)  # fmt: skip
            elif topic == ev.REPORT_DRAFTED:
                block = block_of(e.facts)
                if block is not None and block.agent:
                    await conn.execute(
                        f"INSERT INTO {schema}.reports VALUES ($1, $2, $3, $4) "
                        "ON CONFLICT DO NOTHING",
                        e.originator_id, e.tenant_id, block.agent, block.kind,
                    )  # fmt: skip
            elif topic in (ev.REPORT_SUBMITTED, ev.REPORT_HANDED_OVER):
                await self.report(conn, schema, e)
            elif topic == ev.REPORT_WONT_FIX:  # no longer evidence (as the Inbox shows it)
                tenant = await conn.fetchval(
                    f"SELECT tenant_id FROM {schema}.reports WHERE report_id = $1",
                    e.originator_id,
                )
                if tenant is not None:
                    await self.remove(conn, schema, tenant, f"report:{e.originator_id}")
            elif topic == ev.CASE_LIFTED:
                await conn.execute(f"INSERT INTO {schema}.cases VALUES ($1, $2) ON CONFLICT "
                                   "DO NOTHING", e.originator_id, e.ref)  # fmt: skip
            elif topic == ev.CASE_RUN_RECORDED:
                await self.case_run(conn, schema, e)
            elif topic == ev.PROPOSAL_RAISED:
                await self.raised(conn, schema, e)
            elif topic == ev.PROPOSAL_SUPERSEDED:
                await conn.execute(f"UPDATE {schema}.proposals SET state = 'Superseded' "
                                   "WHERE proposal_id = $1", e.originator_id)  # fmt: skip
            elif topic in SPENDING:
                await self.spend(conn, schema, e.originator_id, SPENDING[topic])
            else:
                raise TypeError(f"evidence clusters do not handle {type(e).__name__}")
        if feedback:
            await self.feedback(conn, schema, feedback)

    async def add(self, conn: Connection, schema: str, tenant: str, track: str,
                  target: Target, item: dict[str, Any]) -> None:  # fmt: skip
        """One item on the cluster of (tenant, track, target), once."""
        inserted = await conn.fetchval(
            f"INSERT INTO {schema}.evidence (tenant_id, track, evidence_id, target_asset_id, "
            "target_kind, target_version, item) VALUES ($1, $2, $3, $4, $5, $6, $7) "
            "ON CONFLICT DO NOTHING RETURNING true",
            tenant, track, item["evidenceId"], target.asset_id, target.kind, target.version,
            json.dumps(item),
        )  # fmt: skip
        if inserted:
            await changed(conn, schema, tenant, track, target.asset_id, 1)

    async def remove(self, conn: Connection, schema: str, tenant: str, evidence_id: str) -> None:
        gone = await conn.fetch(
            f"DELETE FROM {schema}.evidence WHERE tenant_id = $1 AND evidence_id = $2 "
            "RETURNING track, target_asset_id, spent",
            tenant, evidence_id,
        )  # fmt: skip
        for row in gone:
            if not row["spent"]:
                await changed(conn, schema, tenant, row["track"], row["target_asset_id"], -1)

    async def recorded(self, conn: Connection, schema: str, e: Any) -> None:
        item = e.item
        target = Target(e.target_asset_id, e.target_kind, e.target_version,
                        harvested_dataset(e.target_asset_id) if e.target_kind == "agent"
                        else None)  # fmt: skip
        ref = item["evidenceId"]
        if ref.startswith("evaluation:"):  # feedback on it names this target, passed or not
            await self.subject(conn, schema, e.tenant_id, "evaluation",
                               ref.removeprefix("evaluation:"), target)  # fmt: skip
        if ref.startswith("skill-candidate:"):  # the procedural memory it reinforced
            await self.subject(conn, schema, e.tenant_id, "memory",
                               ref.removeprefix("skill-candidate:"), target)  # fmt: skip
        if not e.counts:
            return
        await self.add(conn, schema, e.tenant_id, IMPROVEMENT, target, item)
        if item.get("origin") == "drift":  # C40: re-evaluation as well as improvement
            await self.add(conn, schema, e.tenant_id, RE_EVALUATION, target, item)

    async def feedback(self, conn: Connection, schema: str, events: list[Any]) -> None:
        """Feedback that says something is wrong, on its subject's asset, or waiting for it:
        one lookup for the whole run of them, and the waiting ones written together (a
        catch-up's pages are mostly feedback on subjects not known here)."""
        keyed = [(e, *subject_key(e.subject_kind, e.subject_ref)) for e in events]
        rows = await conn.fetch(
            f"SELECT s.* FROM {schema}.subjects s JOIN unnest($1::text[], $2::text[], "
            "$3::text[]) AS k(tenant_id, subject_kind, subject_ref) USING (tenant_id, "
            "subject_kind, subject_ref)",
            [e.tenant_id for e, _, _ in keyed], [k for _, k, _ in keyed],
            [r for _, _, r in keyed],
        )  # fmt: skip
        known = {(r["tenant_id"], r["subject_kind"], r["subject_ref"]): r for r in rows}
        waiting = []
        for e, kind, ref in keyed:
            item = feedback_item(e)
            adds_task = bool(e.corrected_artifact_ref) and e.subject_kind != "run"
            found = known.get((e.tenant_id, kind, ref))
            if found is None:
                waiting.append((e.tenant_id, item["evidenceId"], kind, ref, json.dumps(item),
                                adds_task))  # fmt: skip
            else:
                await self.place(conn, schema, e.tenant_id, target_of(found), item, adds_task)
        await insert_rows(conn, f"{schema}.waiting", WAITING, waiting,
                          conflict="(tenant_id, evidence_id)")  # fmt: skip

    async def place(self, conn: Connection, schema: str, tenant: str, target: Target,
                    item: dict[str, Any], adds_task: bool) -> None:  # fmt: skip
        await self.add(conn, schema, tenant, IMPROVEMENT, target, item)
        if adds_task and target.dataset_id:  # C27: a task its dataset lacks (decisions D55)
            dataset = Target(target.dataset_id, "dataset", None, target.dataset_id)
            await self.add(conn, schema, tenant, DATASET_ADDITION, dataset, item)

    async def subject(self, conn: Connection, schema: str, tenant: str, kind: str, ref: str,
                      target: Target) -> None:  # fmt: skip
        """A subject's asset is known: feedback that waited for it joins its cluster."""
        await conn.execute(
            f"INSERT INTO {schema}.subjects VALUES ($1, $2, $3, $4, $5, $6, $7) "
            "ON CONFLICT DO NOTHING",
            tenant, kind, ref, target.asset_id, target.kind, target.version, target.dataset_id,
        )  # fmt: skip
        waited = await conn.fetch(
            f"DELETE FROM {schema}.waiting WHERE tenant_id = $1 AND subject_kind = $2 "
            "AND subject_ref = $3 RETURNING item, adds_task", tenant, kind, ref,
        )  # fmt: skip
        for row in waited:
            await self.place(conn, schema, tenant, target, json.loads(row["item"]),
                             row["adds_task"])  # fmt: skip

    async def report(self, conn: Connection, schema: str, e: Any) -> None:
        found = await conn.fetchrow(
            f"SELECT tenant_id, agent, kind FROM {schema}.reports WHERE report_id = $1",
            e.originator_id,
        )
        if found is None:
            return  # a report that names no agent is about no asset
        item = report_item(e, found["kind"])
        target = Target(agent_asset(found["agent"]), "agent", None, None)
        await self.add(conn, schema, found["tenant_id"], IMPROVEMENT, target, item)

    async def case_run(self, conn: Connection, schema: str, e: Any) -> None:
        if not case_failed(e):
            return
        ref = await conn.fetchval(f"SELECT ref FROM {schema}.cases WHERE case_id = $1",
                                  e.originator_id)  # fmt: skip
        item = case_item(e, ref)
        target = Target(agent_asset(e.agent), "agent", None, None)
        await self.add(conn, schema, e.tenant_id, IMPROVEMENT, target, item)

    async def raised(self, conn: Connection, schema: str, e: Any) -> None:
        """A proposal on exactly the cluster's unspent evidence: the cluster is not ready
        again until it changes (C43)."""
        track, refs = track_of(e.kind), list(e.evidence_refs)
        await conn.execute(
            f"INSERT INTO {schema}.proposals VALUES ($1, $2, $3, $4, 'Proposed', $5) "
            "ON CONFLICT DO NOTHING",
            e.originator_id, e.tenant_id, track, e.target_asset_id, refs,
        )  # fmt: skip
        await conn.execute(
            f"UPDATE {schema}.clusters c SET raised_version = c.version "
            "WHERE tenant_id = $1 AND track = $2 AND target_asset_id = $3 AND unspent = $4 "
            f"AND (SELECT count(*) FROM {schema}.evidence x WHERE x.tenant_id = $1 "
            "AND x.track = $2 AND x.target_asset_id = $3 AND NOT x.spent "
            "AND x.evidence_id = ANY($5::text[])) = $4",
            e.tenant_id, track, e.target_asset_id, len(set(refs)), refs,
        )  # fmt: skip

    async def spend(self, conn: Connection, schema: str, proposal_id: Any, state: str) -> None:
        found = await conn.fetchrow(
            f"UPDATE {schema}.proposals SET state = $2 WHERE proposal_id = $1 "
            "RETURNING tenant_id, track, evidence_refs",
            proposal_id, state,
        )  # fmt: skip
        if found is None:
            return
        spent = await conn.fetch(
            f"UPDATE {schema}.evidence SET spent = true WHERE tenant_id = $1 AND track = $2 "
            "AND evidence_id = ANY($3::text[]) AND NOT spent RETURNING target_asset_id",
            found["tenant_id"], found["track"], found["evidence_refs"],
        )  # fmt: skip
        counts: dict[str, int] = {}
        for row in spent:
            counts[row["target_asset_id"]] = counts.get(row["target_asset_id"], 0) + 1
        for target, n in counts.items():
            await changed(conn, schema, found["tenant_id"], found["track"], target, -n)


def target_of(row: asyncpg.Record) -> Target:
    return Target(row["target_asset_id"], row["target_kind"], row["target_version"],
                  row["dataset_id"])  # fmt: skip


async def changed(conn: Connection, schema: str, tenant: str, track: str, target: str,
                  delta: int) -> None:  # fmt: skip
    await conn.execute(
        f"INSERT INTO {schema}.clusters (tenant_id, track, target_asset_id, unspent, version) "
        "VALUES ($1, $2, $3, $4, 1) ON CONFLICT (tenant_id, track, target_asset_id) DO UPDATE "
        "SET unspent = clusters.unspent + $4, version = clusters.version + 1",
        tenant, track, target, delta,
    )  # fmt: skip


@dataclass(frozen=True)
class ReadyCluster:
    tenant_id: str
    track: str
    target_asset_id: str
    evidence: list[asyncpg.Record]  # target_kind, target_version, item (JSON text)
    open_proposals: list[str]  # the target's proposals on this track still Proposed


async def ready_clusters(
    pool: asyncpg.Pool, min_items: int, *, schema: str = SCHEMA
) -> list[ReadyCluster]:
    """The clusters changed since their last proposal with at least ``min_items`` unspent
    items (C29), in a stable order, each with its unspent evidence and open proposals."""
    found = []
    async with pool.acquire() as conn, conn.transaction(readonly=True, isolation="repeatable_read"):
        keys = await conn.fetch(
            f"SELECT tenant_id, track, target_asset_id FROM {schema}.clusters "
            "WHERE version > raised_version AND unspent >= $1 "
            "ORDER BY tenant_id, track, target_asset_id",
            max(1, min_items),
        )
        for key in keys:
            rows = await conn.fetch(
                f"SELECT target_kind, target_version, item FROM {schema}.evidence "
                "WHERE tenant_id = $1 AND track = $2 AND target_asset_id = $3 AND NOT spent",
                *key,
            )
            open_ids = await conn.fetch(
                f"SELECT proposal_id FROM {schema}.proposals WHERE tenant_id = $1 "
                "AND track = $2 AND target_asset_id = $3 AND state = 'Proposed'",
                *key,
            )
            tenant, track, target = key
            open_proposals = [str(r["proposal_id"]) for r in open_ids]
            found.append(ReadyCluster(tenant, track, target, list(rows), open_proposals))
    return found
