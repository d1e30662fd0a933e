"""HTTP routes of learning proposals: ``/factory/learning/proposals`` (SPEC C34–C36, C32).

Reads need ``factory.evaluation.read``; pick-up, decide and the registry's release callback
need ``factory.assets.write`` (the asset maintainer, C35, C52). ``reviewedBy`` is stamped from
the caller; a body that brings it is refused, naming it.
"""

import json
import logging
from datetime import datetime
from typing import Annotated, Any
from uuid import UUID

import asyncpg
from fastapi import APIRouter, Depends, Query, Request

from contracts.errors import NotFound
from contracts.learning import (
    STAMPED_PROPOSAL_FIELDS,
    DecideProposal,
    DecideProposalCommand,
    PickUpProposal,
    ProposalKind,
    ProposalState,
    RecordRelease,
    RecordReleaseCommand,
)
from contracts.learning_answers import ProposalList, ProposalView, ProposalWritten
from projections.appraisal_queries import charter_line_ids
from projections.learning_proposals import ProposalKey, get_proposal, list_proposals
from services.bus.decisions import Outcome
from services.edge.auth import Principal
from services.edge.bodies import no_body, read_command
from services.edge.http import Http
from services.edge.openapi import body
from services.edge.parameters import PAGE, Before, Limit, MinPosition
from services.edge.problems import READ_ERRORS, WRITE_ERRORS

log = logging.getLogger(__name__)

READ, WRITE = "factory.evaluation.read", "factory.assets.write"
READ_MODEL = "learning_proposals"


def written(http: Http, outcome: Outcome, principal: Principal) -> dict[str, Any]:
    shown = outcome.result
    return {
        "proposalId": str(shown.proposal_id),
        "state": shown.state.value,
        "reviewedBy": shown.reviewed_by,
        "resultingReleaseId": shown.release_id,
        "position": http.position(outcome, principal),
    }


async def charter_lines(pool: asyncpg.Pool, tenant_id: str) -> tuple[str, ...]:
    """The tenant's charter line ids in rank order, to order proposals tied on evidence
    (M21). A charter that cannot be read ranks nothing: ties go by raisedAt, as without one."""
    try:
        return await charter_line_ids(pool, tenant_id)
    except (asyncpg.PostgresError, OSError) as error:
        log.warning(
            "the charter of %s could not be read (%s); proposals not ranked", tenant_id, error
        )
        return ()


def proposal_cursor(key: ProposalKey) -> str:
    """A proposal's place in the list (``ProposalKey``) as a cursor's text."""
    count, rank, raised_at, proposal_id = key
    return json.dumps([count, rank, raised_at.isoformat(), proposal_id])


def proposal_key(cursor: str | None) -> ProposalKey | None:
    """``proposal_cursor`` read back: a text this service sealed for this list."""
    if cursor is None:
        return None
    count, rank, raised_at, proposal_id = json.loads(cursor)
    return int(count), int(rank), datetime.fromisoformat(raised_at), str(proposal_id)


def learning_routes(http: Http) -> APIRouter:
    router = APIRouter(prefix="/factory/learning/proposals", tags=["learning proposals"])

    @router.get("", response_model=ProposalList, responses=READ_ERRORS)
    async def proposals(
        principal: Annotated[Principal, Depends(http.reading(READ))],
        state: ProposalState | None = None,
        kind: ProposalKind | None = None,
        target: Annotated[str | None, Query(max_length=512)] = None,
        before: Before = None,
        limit: Limit = PAGE,
        min_position: MinPosition = None,
    ) -> dict[str, Any]:
        """C36: by state, kind and target, each with its evidence and expected effect; most
        evidence first, ties by the rank of the charter line their evidence serves (M21),
        then by raisedAt; a page at a time (`limit`, and `before`: the `next` of the
        previous page). The order follows the charter: pages read while it changes may
        place a proposal anew."""
        await http.read_at(READ_MODEL, min_position, principal)
        found, last = await list_proposals(
            http.pool,
            principal.tenant_id,
            state=state and state.value,
            kind=kind and kind.value,
            target=target,
            charter=await charter_lines(http.pool, principal.tenant_id),
            after=proposal_key(http.opened_key("proposals", before, principal)),
            limit=limit,
        )
        next_key = None if last is None else proposal_cursor(last)
        return {"items": found, "next": http.sealed_key("proposals", next_key, principal)}

    @router.get("/{proposal_id:uuid}", response_model=ProposalView, responses=READ_ERRORS)
    async def proposal(
        proposal_id: UUID,
        principal: Annotated[Principal, Depends(http.reading(READ))],
        min_position: MinPosition = None,
    ) -> dict[str, Any]:
        await http.read_at(READ_MODEL, min_position, principal)
        charter = await charter_lines(http.pool, principal.tenant_id)
        found = await get_proposal(http.pool, principal.tenant_id, proposal_id, charter=charter)
        if found is None:
            raise NotFound(f"no proposal {proposal_id}", proposalId=str(proposal_id))
        return found

    @router.post(
        "/{proposal_id:uuid}/pick-up", response_model=ProposalWritten, responses=WRITE_ERRORS
    )
    async def pick_up(
        proposal_id: UUID,
        request: Request,
        principal: Annotated[Principal, Depends(http.scope(WRITE))],
    ) -> dict[str, Any]:
        """C34: Proposed → InReview; reviewedBy = the caller. Takes no body."""
        await no_body(request)
        command = PickUpProposal(proposal_id=proposal_id)
        outcome = await http.execute(command, principal, f"pick-up/{proposal_id}")
        return written(http, outcome, principal)

    @router.post(
        "/{proposal_id:uuid}/decide",
        response_model=ProposalWritten,
        responses=WRITE_ERRORS,
        openapi_extra=body(DecideProposal, {"decision": "reject", "reason": "not worth it"}),
    )
    async def decide(
        proposal_id: UUID,
        request: Request,
        principal: Annotated[Principal, Depends(http.scope(WRITE))],
    ) -> dict[str, Any]:
        """C34: accept approves an InReview proposal and requests its Draft release (C32); it
        becomes Accepted when the release exists (decisions D54). Reject: Rejected, a reason
        required (C33). Another state: 409 naming both states."""
        said = await read_command(request, DecideProposal, STAMPED_PROPOSAL_FIELDS)
        command = DecideProposalCommand(
            proposal_id=proposal_id, decision=said.decision, reason=said.reason
        )
        outcome = await http.execute(command, principal, f"decide/{proposal_id}")
        return written(http, outcome, principal)

    @router.post(
        "/{proposal_id:uuid}/release",
        response_model=ProposalWritten,
        responses=WRITE_ERRORS,
        openapi_extra=body(RecordRelease, {"releaseId": "release-42"}),
    )
    async def release(
        proposal_id: UUID,
        request: Request,
        principal: Annotated[Principal, Depends(http.scope(WRITE))],
    ) -> dict[str, Any]:
        """The agent registry's callback: the Draft release it opened (C32)."""
        said = await read_command(request, RecordRelease, STAMPED_PROPOSAL_FIELDS)
        command = RecordReleaseCommand(proposal_id=proposal_id, release_id=said.release_id)
        outcome = await http.execute(command, principal, f"release/{proposal_id}")
        return written(http, outcome, principal)

    return router
