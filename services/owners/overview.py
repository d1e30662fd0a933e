"""What waits for an agent's maintainers, agent by agent (decisions D250–D256): the answer of
``GET /factory/owners/agents``, the console's My agents page and ``feedbackloop agents mine``.

Read from the read models that answer the same questions one at a time — the register
(``projections.agent_register``), the Inbox, the nights and eval cases, the proposals — and
the webhooks' outbox (``services.owners.reading``), a page of agents at a time. Each list is
bounded (``SHOWN``) and says how many there are in all; each item links to its own page.
"""

from typing import Any

import asyncpg

from contracts.report_kinds import Addressee, Kind
from projections.agent_register import list_agents
from projections.eval_cases import case_agents
from projections.inbox import open_for_agents
from projections.learning_proposals import waiting_on_maintainers
from projections.nights import get_night, list_nights
from services.owners.notices import failing
from services.owners.reading import webhook_health

SHOWN = 10  # D254: the newest open reports, the oldest proposals, the first failing lines
EXCERPT = 200  # characters of a report's words, as the Inbox's list cuts them
# D251: the Kinds addressed to the agent's owner (SPEC W34, W35), as the webhook hears them.
OWNER_KINDS = tuple(kind.value for kind in Kind if kind.addressee is Addressee.agent_owner)


def waiting_for(state: str, approved: bool) -> str:
    """D253: what a waiting proposal needs from a maintainer next."""
    if state == "Proposed":
        return "pick-up"
    return "release" if approved or state == "Accepted" else "decision"


async def owned_agents(
    pool: asyncpg.Pool,
    tenant_id: str,
    maintainer: str | None,
    *,
    after: str | None = None,
    limit: int = 50,
) -> tuple[list[dict[str, Any]], str | None]:
    """The agents of the tenant that ``maintainer`` maintains (None: every agent, D250), by
    name after ``after``, each with what waits for its maintainers; and the name to continue
    after (None on the last page)."""
    agents, last = await list_agents(
        pool, tenant_id, after=after, limit=limit, maintainer=maintainer
    )
    names = [agent["agent"] for agent in agents]
    if not names:
        return [], last
    reports = await open_reports(pool, tenant_id, names)
    night = await last_night(pool, tenant_id, names)
    proposals = await waiting_proposals(pool, tenant_id, names)
    hooks = {hook["agent"]: hook for hook in await webhook_health(pool, tenant_id)}
    items = [
        {
            **agent,
            "reports": reports.get(agent["agent"], {"open": 0, "items": []}),
            "night": night and night.get(agent["agent"], night[""]),
            "proposals": proposals.get(agent["agent"], {"waiting": 0, "items": []}),
            "webhook": webhook(hooks.get(agent["agent"])),
        }
        for agent in agents
    ]
    return items, last


async def open_reports(
    pool: asyncpg.Pool, tenant_id: str, agents: list[str]
) -> dict[str, dict[str, Any]]:
    """D251: per agent, its open reports addressed to its owner."""
    found: dict[str, dict[str, Any]] = {}
    for row in await open_for_agents(pool, tenant_id, agents, OWNER_KINDS, each=SHOWN):
        shown = found.setdefault(row["agent"], {"open": row["open"], "items": []})
        at = row["submitted_at"]
        shown["items"].append(
            {
                "reportId": str(row["report_id"]),
                "kind": row["kind"],
                "status": row["status"],
                "model": row["model"],
                "message": row["message"][:EXCERPT],
                "submittedAt": at and at.isoformat(),
            }
        )
    return found


async def last_night(
    pool: asyncpg.Pool, tenant_id: str, agents: list[str]
) -> dict[str, dict[str, Any]] | None:
    """D252: the tenant's newest night and, per agent, its failing lines there (under ``""``:
    the night with none failing). None before the tenant's first night."""
    newest, _ = await list_nights(pool, tenant_id, limit=1)
    night = newest and await get_night(pool, tenant_id, newest[0]["date"])
    if not night:
        return None
    lines = [line for line in night["lines"] if failing(line)]
    owners = await case_agents(pool, tenant_id, [line["case"] for line in lines])
    head = {"date": night["date"], "status": night["status"]}
    found: dict[str, dict[str, Any]] = {"": {**head, "failing": 0, "items": []}}
    for line in lines:
        agent, ref = owners.get(line["case"], ("", ""))
        if agent not in agents:
            continue
        shown = found.setdefault(agent, {**head, "failing": 0, "items": []})
        shown["failing"] += 1
        if len(shown["items"]) < SHOWN:
            score = line.get("score") or {}
            shown["items"].append(
                {
                    "caseId": line["case"],
                    "ref": ref,
                    "outcome": line["outcome"],
                    "reason": line.get("reason"),
                    "passed": score.get("passed"),
                    "scored": score.get("scored"),
                }
            )
    return found


async def waiting_proposals(
    pool: asyncpg.Pool, tenant_id: str, agents: list[str]
) -> dict[str, dict[str, Any]]:
    """D253: per agent, the proposals for it that wait for one of its maintainers."""
    found: dict[str, dict[str, Any]] = {}
    for row in await waiting_on_maintainers(pool, tenant_id, agents, each=SHOWN):
        shown = found.setdefault(row["target_asset_id"], {"waiting": row["waiting"], "items": []})
        shown["items"].append(
            {
                "proposalId": str(row["proposal_id"]),
                "kind": row["kind"],
                "state": row["state"],
                "waitingFor": waiting_for(row["state"], row["approved"]),
                "raisedAt": row["raised_at"].isoformat(),
            }
        )
    return found


def webhook(health: dict[str, Any] | None) -> dict[str, Any] | None:
    """D255: the agent's webhook as its own GET shows its health; None when none is set."""
    if health is None:
        return None
    keys = ("url", "failing", "lastError", "pending", "givenUp")
    return {key: health[key] for key in keys}
