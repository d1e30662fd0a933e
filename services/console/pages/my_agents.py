"""My agents: what waits for an agent's maintainers, agent by agent — the open reports
addressed to its owner, its cases failing in the last night, the proposals waiting for one of
them, and whether its webhook is failing (decisions D250–D256). Each item links to its own
page. Read through the API's own route (``GET /factory/owners/agents``) with the session's
bearer, in this process, so a script and the page see the same answer under the same rule."""

from typing import Annotated
from urllib.parse import urlencode

import httpx
from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from services.console.console import Console
from services.console.page import Page
from services.console.pages.eval_runs import LOOPBACK
from services.permissions.rules import OWNERS

PAGE_SIZE = 20


def my_agents_routes(console: Console) -> APIRouter:
    router = APIRouter(include_in_schema=False)

    @router.get("/my-agents")
    async def mine(
        request: Request, before: Annotated[str | None, Query(max_length=1024)] = None
    ) -> Response:
        visitor = await console.visitor(request, reads=OWNERS)
        asked: dict[str, str | int] = {"limit": PAGE_SIZE}
        if before:
            asked["before"] = before
        transport = httpx.ASGITransport(app=request.app)
        async with httpx.AsyncClient(transport=transport, base_url=LOOPBACK) as client:
            answer = await client.get(
                "/factory/owners/agents",
                params=asked,
                headers={"Authorization": f"Bearer {visitor.session.bearer}"},
            )
        if answer.status_code != 200:  # a cursor not of this list: said as the API says it
            said = answer.json().get("message", "This page cannot be shown.")
            return console.render(
                visitor, "my_agents.html", answer.status_code, current="my-agents",
                agents=[], refusal=said, every="PlatformAdmin" in visitor.principal.roles,
            )  # fmt: skip
        view = answer.json()
        return console.render(
            visitor,
            "my_agents.html",
            current="my-agents",
            agents=view["items"],
            every="PlatformAdmin" in visitor.principal.roles,
            older=f"/my-agents?{urlencode({'before': view['next']})}" if view["next"] else None,
            first="/my-agents" if before else None,
        )

    return router


# Who maintains an agent, or may act for any agent of the tenant (decisions D190, D250).
MY_AGENTS = Page("my-agents", "/my-agents", "My agents", OWNERS, my_agents_routes)
