"""One comparison side by side in the console (decisions D182): read through the API's own
route (``GET /factory/evals/comparisons/{id}``) with the session's bearer, in this process,
so the page's rule is the API's read rule for the same data. Under the eval cases' page."""

from uuid import UUID

import httpx
from fastapi import APIRouter, Request
from fastapi.responses import Response

from services.console.console import Console
from services.console.pages.eval_runs import LOOPBACK
from services.permissions.rules import READ_ALL


def eval_comparison_routes(console: Console) -> APIRouter:
    router = APIRouter(include_in_schema=False)

    @router.get("/eval-cases/comparisons/{comparison_id:uuid}")
    async def comparison(request: Request, comparison_id: UUID) -> Response:
        visitor = await console.visitor(request, reads=READ_ALL)
        transport = httpx.ASGITransport(app=request.app)
        async with httpx.AsyncClient(transport=transport, base_url=LOOPBACK) as client:
            answer = await client.get(
                f"/factory/evals/comparisons/{comparison_id}",
                headers={"Authorization": f"Bearer {visitor.session.bearer}"},
            )
        if answer.status_code != 200:
            return console.render(
                visitor, "not_found.html", 404, what=f"There is no comparison {comparison_id}."
            )
        return console.render(
            visitor, "eval_comparison.html", current="eval-cases", view=answer.json()
        )

    return router
