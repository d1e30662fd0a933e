"""The Proposals page: asset maintainers list the learning proposals by state, kind and target,
open one (its evidence, expected effect, the charter line it serves, what happened to it) and
act on it — Pick up, Accept, Reject with a reason, and record the Draft release the agent
registry opened — through the API's own commands, under the API's own command ids, so the
role rules, the register's maintainers and ``reviewedBy`` are the API's (SPEC C32–C36, M21).
"""

from collections.abc import Callable
from typing import Annotated, Any
from urllib.parse import urlencode
from uuid import UUID

import asyncpg
from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel, ValidationError

from contracts.errors import DomainError, Refused
from contracts.learning import (
    DecideProposalCommand,
    PickUpProposal,
    ProposalKind,
    ProposalState,
    RecordReleaseCommand,
)
from projections.learning_proposals import get_proposal, list_proposals
from services.console.console import Console, Visitor
from services.console.page import Page
from services.edge.problems import status_of
from services.learning.api import READ_MODEL, charter_lines, proposal_cursor, proposal_key
from services.permissions.rules import MAINTAINER, READ_ALL
from services.store.artifacts import get_artifact

# SPEC C52, decisions D23: the tenant's proposals are read by every role but a Requester's;
# an AssetMaintainer acts, and the handler checks the register names them maintainer of the
# proposal's target. The navigation offers the page to those who look after assets.
SHOWN_TO = ("AssetMaintainer", "PlatformAdmin", "Observer")
PAGE_SIZE = 25
SUMMARY_SHOWN = 20_000  # characters of the drafted summary shown; the rest is a download
LISTED = "proposals"  # the name the API seals this list's cursors under: one cursor, two doors
CHOICES = {
    "state": tuple(state.value for state in ProposalState),
    "kind": tuple(kind.value for kind in ProposalKind),
}
Text = Annotated[str | None, Query(max_length=512)]


def history(proposal: dict[str, Any]) -> list[tuple[str | None, str | None, str]]:
    """What happened to a proposal: (when, who, what), oldest first, from what the read model
    keeps of it — its raising, the maintainer who took it up, the decision and the release.
    A pick-up keeps no time of its own there, nor does a recorded release; they show none."""
    steps: list[tuple[str | None, str | None, str]] = [
        (proposal["raisedAt"], "the proposal generator", "raised it")
    ]
    by, decided = proposal["reviewedBy"], proposal["decidedAt"]
    state = proposal["state"]
    if by is not None:
        steps.append((None, by, "picked it up"))
    if state == "Superseded":
        steps.append((decided, None, f"superseded by proposal {proposal['supersededBy']}"))
    elif state == "Rejected":
        steps.append((decided, by, f"rejected it: {proposal['reason']}"))
    elif decided is not None:  # accepted: the Draft release is requested (decisions D54)
        steps.append((decided, by, "accepted it; a Draft release was requested"))
    if proposal["resultingReleaseId"] is not None:
        steps.append((None, None, f"its Draft release {proposal['resultingReleaseId']} recorded"))
    return steps


async def summary(pool: asyncpg.Pool, tenant_id: str, ref: str) -> str | None:
    """The drafter's summary (C06: an artifact, markdown) as text to read beside the evidence;
    None when the tenant's store has no such artifact or it is no UTF-8 text."""
    try:
        _, content = await get_artifact(pool, tenant_id, ref)
        text = content.decode("utf-8")
    except (DomainError, UnicodeDecodeError):
        return None
    return text if len(text) <= SUMMARY_SHOWN else text[:SUMMARY_SHOWN] + " …"


def moves(proposal: dict[str, Any]) -> tuple[str, ...]:
    """What a maintainer can still do (SPEC C34; the domain refuses the rest anyway)."""
    if proposal["state"] == "Proposed":
        return ("pick-up",)
    if proposal["waitingForRelease"]:
        return ("release",)  # decided; the registry's answer is all that is missing (C53)
    if proposal["state"] == "InReview":
        return ("decide",)
    return ()


def proposal_routes(console: Console) -> APIRouter:
    router = APIRouter(include_in_schema=False)
    http = console.http

    @router.get("/proposals")
    async def proposals(
        request: Request,
        state: Text = None,
        kind: Text = None,
        target: Text = None,
        before: Text = None,
    ) -> Response:
        visitor = await console.visitor(request, reads=READ_ALL)
        chosen = {"state": state or None, "kind": kind or None, "target": target or None}
        for name, allowed in CHOICES.items():
            if chosen[name] is not None and chosen[name] not in allowed:
                raise Refused(f"{name} is one of {', '.join(allowed)}", field=name)
        tenant = visitor.principal.tenant_id
        charter = await charter_lines(http.pool, tenant)
        items, last = await list_proposals(
            http.pool,
            tenant,
            state=chosen["state"],
            kind=chosen["kind"],
            target=chosen["target"],
            charter=charter,
            after=proposal_key(http.opened_key(LISTED, before or None, visitor.principal)),
            limit=PAGE_SIZE,
        )
        kept = {name: value for name, value in chosen.items() if value}
        next_key = None if last is None else proposal_cursor(last)
        following = http.sealed_key(LISTED, next_key, visitor.principal)
        return console.render(
            visitor,
            "proposals.html",
            items=items,
            chosen=chosen,
            choices=CHOICES,
            more=f"/proposals?{urlencode({**kept, 'before': following})}" if following else None,
            first=f"/proposals?{urlencode(kept)}" if before else None,
        )

    @router.get("/proposals/{proposal_id:uuid}")
    async def proposal(request: Request, proposal_id: UUID) -> Response:
        visitor = await console.visitor(request, reads=READ_ALL)
        return await shown(visitor, proposal_id)

    async def shown(
        visitor: Visitor,
        proposal_id: UUID,
        status: int = 200,
        refusal: str | None = None,
        form: dict[str, str] | None = None,
    ) -> Response:
        # Decisions D23, D123: the page after a refused act is the proposal's page, read by
        # the page's rule before the proposal is looked up; any signed-in person may post a
        # form, so a Requester alone is refused here alike for a real and a made-up id.
        visitor.must_hold(READ_ALL)
        tenant = visitor.principal.tenant_id
        charter = await charter_lines(http.pool, tenant)
        found = await get_proposal(http.pool, tenant, proposal_id, charter=charter)
        if found is None:
            return console.render(
                visitor, "not_found.html", 404, what=f"There is no proposal {proposal_id}."
            )
        return console.render(
            visitor,
            "proposal.html",
            status,
            proposal=found,
            summary=await summary(http.pool, tenant, found["summaryRef"]),
            steps=history(found),
            moves=moves(found) if visitor.holds(MAINTAINER) else (),
            refusal=refusal,
            form=form or {},
        )

    async def act(
        request: Request,
        proposal_id: UUID,
        command: Callable[[dict[str, str]], BaseModel],
        command_id: str,
    ) -> Response:
        """Issue the command ``command`` makes of the form, as the API's route does and under
        its command id; a refusal comes back on the proposal's page, as a sentence with the
        API's status (decisions D62)."""
        visitor = await console.writer(request)
        form = {k: v for k, v in (await request.form()).items() if isinstance(v, str)}
        try:
            outcome = await http.execute(command(form), visitor.principal, command_id)
        except ValidationError as error:
            problem = error.errors()[0]
            field = ".".join(str(part) for part in problem["loc"])
            return await shown(visitor, proposal_id, 422, f"{field}: {problem['msg']}", form)
        except DomainError as error:
            return await shown(visitor, proposal_id, status_of(error), error.message, form)
        await http.read_at(READ_MODEL, http.position(outcome, visitor.principal), visitor.principal)
        return console.see_other(request, f"/proposals/{proposal_id}", visitor)

    @router.post("/proposals/{proposal_id:uuid}/pick-up")
    async def pick_up(request: Request, proposal_id: UUID) -> Response:
        return await act(
            request,
            proposal_id,
            lambda _: PickUpProposal(proposal_id=proposal_id),
            f"pick-up/{proposal_id}",
        )

    @router.post("/proposals/{proposal_id:uuid}/decide")
    async def decide(request: Request, proposal_id: UUID) -> Response:
        def decision(form: dict[str, str]) -> DecideProposalCommand:
            # A blank reason is no reason: the domain refuses the reject plainly (SPEC C33).
            reason = form.get("reason", "").strip() or None
            return DecideProposalCommand.model_validate(
                {"proposalId": proposal_id, "decision": form.get("decision"), "reason": reason}
            )

        return await act(request, proposal_id, decision, f"decide/{proposal_id}")

    @router.post("/proposals/{proposal_id:uuid}/release")
    async def release(request: Request, proposal_id: UUID) -> Response:
        def recorded(form: dict[str, str]) -> RecordReleaseCommand:
            return RecordReleaseCommand.model_validate(
                {"proposalId": proposal_id, "releaseId": form.get("release", "").strip()}
            )

        return await act(request, proposal_id, recorded, f"release/{proposal_id}")

    return router


PROPOSALS = Page("proposals", "/proposals", "Proposals", SHOWN_TO, proposal_routes)
