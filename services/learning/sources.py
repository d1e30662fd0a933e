"""What the generator reads: the ready clusters of the evidence clusters read model (C28, C42).

The read model (``projections.evidence_clusters``) keeps every kind of evidence clustered per
(tenant, track, target asset) as the log goes, and answers only the clusters that changed
since their last proposal and hold MinEvidenceItems unspent items; so a run reads what is
new, not the whole history (the store's evidence and proposal events, the feedback read
models), and its cost does not grow with the log.

Each row is read back as an ``EvidenceItem``; a row that does not read (recorded before a door
refused what it holds, or a shape no one foresaw) fails its own cluster only.
"""

import json
from dataclasses import dataclass

import asyncpg

from contracts.learning import EvidenceItem
from projections import evidence_clusters
from services.learning.clusters import IMPROVEMENT, Cluster, Fact, clusters

READ_MODEL = evidence_clusters.SCHEMA


@dataclass(frozen=True)
class Unreadable:
    """Evidence that does not read as an item: its target's cluster fails, every other one
    goes on."""

    tenant_id: str
    unit: str  # ``unit_of`` its cluster
    error: Exception


@dataclass(frozen=True)
class Ready:
    cluster: Cluster
    open_proposals: list[str]  # the target's proposals on the track still Proposed (C34)


async def ready_clusters(
    pool: asyncpg.Pool, min_items: int, *, schema: str = READ_MODEL
) -> tuple[list[Ready], list[Unreadable]]:
    """The clusters ready to raise a proposal (C29, C42), and those whose evidence does not
    read."""
    ready, unreadable = [], []
    for found in await evidence_clusters.ready_clusters(pool, min_items, schema=schema):
        try:
            facts = [
                Fact(
                    found.tenant_id,
                    found.target_asset_id,
                    row["target_kind"],
                    row["target_version"],
                    EvidenceItem.model_validate(json.loads(row["item"])),
                )
                for row in found.evidence
            ]
        except (ValueError, TypeError) as error:  # pydantic's ValidationError is a ValueError
            unit = unit_of(found.track, found.target_asset_id)
            unreadable.append(Unreadable(found.tenant_id, unit, error))
            continue
        [cluster] = clusters(facts, [], found.track)
        ready.append(Ready(cluster, found.open_proposals))
    return ready, unreadable


def unit_of(track: str, target_asset_id: str) -> str:
    """A cluster as the scheduler's failures name it: its target, led by a track other than
    ``improvement``."""
    return target_asset_id if track == IMPROVEMENT else f"{track}:{target_asset_id}"
