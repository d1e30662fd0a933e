"""Command handlers of comparisons: load, decide, hand back for the bus to append (D181)."""

import contextlib
from uuid import UUID

from contracts.comparisons import OpenComparison, RecordComparedCase
from contracts.errors import NotFound
from services.bus.decisions import Decision
from services.bus.issued import Issued
from services.evals.comparison import Comparison
from services.permissions.agent_register import require_maintainer
from services.store.event_store import EventStore
from services.store.owners import load_owned


def load_comparison(store: EventStore, tenant_id: str, comparison_id: UUID) -> Comparison:
    found: Comparison = load_owned(store, tenant_id, comparison_id, "comparison")
    return found


def open_comparison(store: EventStore, issued: Issued) -> Decision:
    """SPEC C52, decisions D23: a comparison runs an agent's cases, as a run of one case does,
    so it is started by a maintainer of that agent (or by the service: the CI gate)."""
    command = issued.command
    assert isinstance(command, OpenComparison)
    require_maintainer(
        store, issued.tenant_id, issued.actor, issued.roles, command.agent, "a comparison"
    )
    with contextlib.suppress(NotFound):  # opened before: a repeat of the same command
        return Decision([], load_comparison(store, issued.tenant_id, command.comparison_id))
    comparison = Comparison.open(
        comparison_id=command.comparison_id,
        tenant_id=issued.tenant_id,
        agent=command.agent,
        baseline=command.baseline,
        candidate=command.candidate,
        conversations=command.conversations,
        effort=command.effort,
        case_ids=command.case_ids,
        started_by=issued.actor,
        at=issued.at,
    )
    return Decision([comparison], comparison)


def record_compared_case(store: EventStore, issued: Issued) -> Decision:
    command = issued.command
    assert isinstance(command, RecordComparedCase)
    comparison = load_comparison(store, issued.tenant_id, command.comparison_id)
    require_maintainer(
        store, issued.tenant_id, issued.actor, issued.roles, comparison.agent, "a comparison"
    )
    comparison.record(
        case_id=command.case_id,
        side=command.side,
        ran_by=command.ran_by,
        model=command.model,
        threads=command.threads,
        summary=command.summary,
        reason=command.reason,
        at=issued.at,
    )
    return Decision([comparison], comparison)
