"""``/factory/agents``: the agent→maintainers register of the caller's tenant. A
PlatformAdmin writes it (the bus refuses anyone else, D22); every role of the tenant reads it
(D23). Another tenant's agent is absent, as one never registered is."""

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request
from pydantic import ValidationError

from contracts.agent_register import (
    AgentRegistered,
    RegisterAgent,
    RegisterAgentCommand,
    RegisteredAgent,
    RegisteredAgentList,
)
from contracts.errors import NotFound, Refused, echoed
from projections.agent_register import list_agents
from services.agents.handlers import shown
from services.edge.auth import Principal
from services.edge.bodies import read_command
from services.edge.http import Http
from services.edge.openapi import body
from services.edge.parameters import PAGE, Before, IdempotencyKey, Limit, MinPosition, command_id
from services.edge.problems import READ_ERRORS, WRITE_ERRORS
from services.permissions.agent_register import registration
from services.permissions.rules import READERS
from services.store.event_store import EventStore

# An agent's path, as the register's ``Name`` bounds it.
AgentPath = Annotated[str, Path(min_length=1, max_length=200)]
EXAMPLE = {"maintainers": ["maria", "tom"], "repository": "acme/support-agent"}


def agent_routes(http: Http, store: EventStore) -> APIRouter:
    router = APIRouter(prefix="/factory/agents", tags=["agent register"])

    @router.put(
        "/{agent:name}",
        response_model=AgentRegistered,
        responses=WRITE_ERRORS,
        openapi_extra=body(RegisterAgent, EXAMPLE),
    )
    async def register_agent(
        agent: AgentPath,
        request: Request,
        principal: Annotated[Principal, Depends(http.holding(READERS))],
        idempotency_key: IdempotencyKey = None,
    ) -> dict[str, Any]:
        """Register an agent's maintainers (its AssetMaintainers, SPEC C52) and, optionally,
        the tracker repository (`owner/name`) its issues are filed in; what the body says is
        what the register holds afterwards. PlatformAdmin only (403 `not-permitted` naming
        the role otherwise)."""
        said = await read_command(request, RegisterAgent, frozenset())
        try:
            command = RegisterAgentCommand(agent=agent, registration=said)
        except ValidationError as error:  # the path's agent: bounded, no NUL, not blank
            raise Refused(f"agent: {error.errors()[0]['msg']}", field="agent") from None
        outcome = await http.execute(
            command, principal, command_id(idempotency_key), idempotency_key
        )
        return {
            **outcome.result.model_dump(),
            "position": http.position(outcome, principal),
        }

    @router.get("", response_model=RegisteredAgentList, responses=READ_ERRORS)
    async def agents(
        principal: Annotated[Principal, Depends(http.holding(READERS))],
        before: Before = None,
        limit: Limit = PAGE,
        min_position: MinPosition = None,
    ) -> dict[str, Any]:
        """The tenant's register, by agent name: each agent with its maintainers and
        repository. Every role reads (decisions D23); `next` continues after the page."""
        await http.read_at("access", min_position, principal)

        async def page(after: str | None) -> tuple[list[dict[str, Any]], str | None]:
            return await list_agents(http.pool, principal.tenant_id, after=after, limit=limit)

        found, next_page = await http.keyed_page("agents", before, principal, page)
        return {"items": found, "next": next_page}

    @router.get("/{agent:name}", response_model=RegisteredAgent, responses=READ_ERRORS)
    async def get_agent(
        agent: AgentPath, principal: Annotated[Principal, Depends(http.holding(READERS))]
    ) -> dict[str, Any]:
        """The agent as the register holds it: maintainers and repository. Every role reads."""
        found = await asyncio.to_thread(registration, store, principal.tenant_id, agent)
        if found is None:
            raise NotFound(f"no agent {echoed(agent)!r} in the register", field="agent")
        return shown(found).model_dump()

    return router
