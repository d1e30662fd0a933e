"""What a night is planned from, as the read models hold it: the tenant's confirmed cases
(SPEC W78) and the changes of their agents that may owe them a re-run (decisions D242)."""

from datetime import datetime
from uuid import UUID

import asyncpg

from projections.agent_changes import changes_since
from projections.eval_cases import list_cases
from services.nightly.planning import Candidate
from services.nightly.reruns import Change


async def confirmed_candidates(pool: asyncpg.Pool, tenant: str) -> list[Candidate]:
    """The tenant's confirmed cases from the eval-cases read model (W78)."""
    return [
        Candidate(
            case_id=UUID(case["caseId"]),
            ref=case["ref"],
            confirmed_by=case["confirmedBy"],
            model=case["model"],
            last_run_at=(
                datetime.fromisoformat(case["lastRun"]["recordedAt"]) if case["lastRun"] else None
            ),
            agent=case["agent"],
        )
        for case in await list_cases(pool, tenant, confirmed=True)
    ]


async def changes_owed(
    pool: asyncpg.Pool, tenant: str, candidates: list[Candidate]
) -> list[Change]:
    """The tenant's changes of its cases' agents since the oldest last run among them: an
    older change is owed to no case (D242)."""
    runs = [c.last_run_at for c in candidates if c.last_run_at is not None]
    agents = sorted({c.agent for c in candidates if c.agent})
    if not runs or not agents:
        return []
    found = await changes_since(pool, tenant, agents, min(runs))
    return [
        Change(c["agent"], c["what"], c["from"], c["to"], c["at"], c["recordedAt"]) for c in found
    ]
