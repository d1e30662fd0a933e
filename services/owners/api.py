"""``/factory/agents/{agent}/webhook``: an agent's webhook (decisions D190-D196).

PUT sets it (the URL; the service makes a new signing secret each time and shows it in this
answer only, D191), GET shows it and its health (failing, the last error, what waits),
DELETE withdraws it. A maintainer the register names for this agent, or a PlatformAdmin of the
tenant (D190); anyone else is refused 403 naming the role, another tenant's agent is absent.
"""

import asyncio
import secrets
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request
from pydantic import ValidationError

from contracts.agent_webhooks import (
    AgentWebhookHealthList,
    AgentWebhookShown,
    AgentWebhookWithdrawn,
    SetAgentWebhook,
    SubscribeAgentWebhook,
    WithdrawAgentWebhook,
)
from contracts.errors import NotFound, Refused, RoleRequired, echoed
from contracts.owned_agents import OwnedAgentList
from services.edge.auth import Principal
from services.edge.bodies import read_command
from services.edge.http import Http
from services.edge.openapi import body
from services.edge.parameters import PAGE, Before, Limit, MinPosition, command_id
from services.edge.problems import READ_ERRORS, WRITE_ERRORS
from services.owners.handlers import ADMIN_ROLE, shown, webhook_of
from services.owners.overview import owned_agents
from services.owners.reading import webhook_health
from services.permissions.agent_register import maintainers_of, registration
from services.permissions.rules import OWNERS
from services.store.event_store import EventStore

AgentPath = Annotated[str, Path(min_length=1, max_length=200)]
EXAMPLE = {"url": "https://hooks.example/feedbackloop"}
# Who watches the instance (as services.operations reads it, D94): they see the webhooks' health.
WATCHERS = ("Operator", "PlatformAdmin", "Observer")
SECRET_BYTES = 32  # 256 bits, as hex: the HMAC-SHA256 key (D191)
# The read models the overview of owned agents reads (D256: ``minPosition`` waits for each).
OVERVIEW_READS = ("access", "inbox", "eval_cases", "nights", "learning_proposals")
OWNED = "owned-agents"  # the overview's cursors are of this list only


def agent_of(agent: str) -> str:
    """The path's agent, bounded as the register bounds a name (422 naming ``agent``)."""
    try:
        return WithdrawAgentWebhook(agent=agent).agent
    except ValidationError as error:
        raise Refused(f"agent: {error.errors()[0]['msg']}", field="agent") from None


def may_read(store: EventStore, principal: Principal, agent: str) -> None:
    """D190: the agent's maintainers and the tenant's PlatformAdmins read its webhook."""
    if registration(store, principal.tenant_id, agent) is None:
        raise NotFound(f"no agent {echoed(agent)!r} in the register", field="agent")
    if ADMIN_ROLE in principal.roles:
        return
    if principal.subject not in maintainers_of(store, principal.tenant_id, agent):
        raise RoleRequired(
            f"only a maintainer of agent {echoed(agent)!r} in the register reads its webhook",
            needed=("AssetMaintainer",),
        )


def webhook_routes(http: Http, store: EventStore) -> APIRouter:
    router = APIRouter(prefix="/factory/agents", tags=["agent webhooks"])

    @router.put(
        "/{agent:name}/webhook",
        response_model=AgentWebhookShown,
        responses=WRITE_ERRORS,
        openapi_extra=body(SetAgentWebhook, EXAMPLE),
    )
    async def set_webhook(
        agent: AgentPath,
        request: Request,
        principal: Annotated[Principal, Depends(http.holding(OWNERS))],
    ) -> dict[str, Any]:
        """Set where the agent's notices go: reports addressed to it, its failing cases of a
        night, proposals raised for it, each POSTed once as a signed CloudEvent. The answer
        holds the signing secret, shown this once (a new one at every PUT)."""
        said = await read_command(request, SetAgentWebhook, frozenset())
        command = SubscribeAgentWebhook(
            agent=agent_of(agent), url=said.url, secret=secrets.token_hex(SECRET_BYTES)
        )
        outcome = await http.execute(command, principal, command_id(None))
        return dict(outcome.result.model_dump(by_alias=True))

    @router.get("/{agent:name}/webhook", response_model=AgentWebhookShown,
                responses=READ_ERRORS)  # fmt: skip
    async def get_webhook(
        agent: AgentPath, principal: Annotated[Principal, Depends(http.holding(OWNERS))]
    ) -> dict[str, Any]:
        """The agent's webhook (never its secret) and whether it is failing."""
        name = agent_of(agent)
        await asyncio.to_thread(may_read, store, principal, name)
        found = await asyncio.to_thread(webhook_of, store, principal.tenant_id, name)
        if found is None or not found.active:
            raise NotFound(f"agent {echoed(name)!r} has no webhook", field="agent")
        answer = shown(found).model_dump(by_alias=True)
        for health in await webhook_health(http.pool, principal.tenant_id, name):
            answer.update(failing=health["failing"], lastError=health["lastError"],
                          pending=health["pending"])  # fmt: skip
        return answer

    @router.delete("/{agent:name}/webhook", response_model=AgentWebhookWithdrawn,
                   responses=WRITE_ERRORS)  # fmt: skip
    async def withdraw_webhook(
        agent: AgentPath, principal: Annotated[Principal, Depends(http.holding(OWNERS))]
    ) -> dict[str, Any]:
        """Withdraw the agent's webhook: nothing more is posted, pending retries included."""
        command = WithdrawAgentWebhook(agent=agent_of(agent))
        outcome = await http.execute(command, principal, command_id(None))
        return dict(outcome.result.model_dump(by_alias=True))

    return router


def operations_routes(http: Http) -> APIRouter:
    """D196: the tenant's agents' webhooks, failing ones first, where Operations reads."""
    router = APIRouter(prefix="/factory/operations", tags=["operations"])

    @router.get("/agent-webhooks", response_model=AgentWebhookHealthList,
                responses=READ_ERRORS)  # fmt: skip
    async def agent_webhooks(
        principal: Annotated[Principal, Depends(http.holding(WATCHERS))],
    ) -> dict[str, Any]:
        """Every agent's webhook of your tenant with its health: failing (its latest attempt
        failed), the last error and status, what waits and what was given up."""
        found = await webhook_health(http.pool, principal.tenant_id)
        return {"items": sorted(found, key=lambda item: not item["failing"])}

    return router


def owned_routes(http: Http) -> APIRouter:
    """D250: what waits for the caller's agents' maintainers, an agent at a time."""
    router = APIRouter(prefix="/factory/owners", tags=["owners"])

    @router.get("/agents", response_model=OwnedAgentList, responses=READ_ERRORS)
    async def owned(
        principal: Annotated[Principal, Depends(http.holding(OWNERS))],
        before: Before = None,
        limit: Limit = PAGE,
        min_position: MinPosition = None,
    ) -> dict[str, Any]:
        """The agents the register names you a maintainer of (a PlatformAdmin: every agent of
        the tenant), by name, each with what waits for its maintainers: the open reports
        addressed to its owner (New or Triaged), its cases failing in the tenant's last night,
        the proposals waiting to be picked up, decided or released, and its webhook's health.
        Each list shows its first ten and says how many there are; `next` continues."""
        for read_model in OVERVIEW_READS:
            await http.read_at(read_model, min_position, principal)
        # D250: a PlatformAdmin answers for every agent (D190 lets them set any webhook).
        maintainer = None if ADMIN_ROLE in principal.roles else principal.subject

        async def page(after: str | None) -> tuple[list[dict[str, Any]], str | None]:
            return await owned_agents(
                http.pool, principal.tenant_id, maintainer, after=after, limit=limit
            )

        found, next_page = await http.keyed_page(OWNED, before, principal, page)
        return {"items": found, "next": next_page}

    return router
