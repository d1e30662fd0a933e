"""Command handlers of appraisal: load, decide, hand back for the bus to append."""

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError

from contracts.appraisal import WriteCharter
from contracts.appraisal_records import AppraiseClosure, RecordPassResults
from contracts.errors import NotFound, Refused
from contracts.runtime_facts import OwnerOutcomeFields, TaskClosed
from services.appraisal.charter import parse_charter
from services.appraisal.closure import TaskClosure, closure_id
from services.appraisal.domain import TenantCharter, charter_id_for, refuse_service
from services.appraisal.labels import Label
from services.appraisal.owner_outcomes import DraftOutcomes, draft_outcomes_id
from services.appraisal.pass_records import PaidPass, pass_id
from services.bus.decisions import Decision
from services.bus.issued import Issued
from services.store.event_store import EventStore


@dataclass(frozen=True)
class CharterWritten:
    lines: int
    findings: tuple[str, ...]


def write_charter(store: EventStore, issued: Issued) -> Decision:
    """Refuse a service before reading its document; parse once (Refused names the line)."""
    command = issued.command
    assert isinstance(command, WriteCharter)
    refuse_service(issued.service)
    charter = parse_charter(command.document)
    written = CharterWritten(len(charter.lines), charter.findings)
    try:
        current: TenantCharter = store.repository.get(charter_id_for(issued.tenant_id))
    except AggregateNotFoundError:
        adopted = TenantCharter.adopt(
            charter,
            tenant_id=issued.tenant_id,
            document=command.document,
            by=issued.actor,
            by_service=issued.service,
            at=issued.at,
        )
        return Decision([adopted], written)
    current.amend(
        charter, document=command.document, by=issued.actor, by_service=issued.service,
        at=issued.at,
    )  # fmt: skip
    return Decision([current], written)


def written_again(_store: EventStore, issued: Issued) -> CharterWritten:
    """What a write repeated under its Idempotency-Key answers: the same document (its
    digest says so) parses to the same lines and findings, and nothing is written again."""
    command = issued.command
    assert isinstance(command, WriteCharter)
    charter = parse_charter(command.document)
    return CharterWritten(len(charter.lines), charter.findings)


def load_or(store: EventStore, ident: UUID) -> Any | None:
    try:
        return store.repository.get(ident)
    except AggregateNotFoundError:
        return None


def record_owner_outcome(store: EventStore, issued: Issued) -> Decision:
    """SPEC M32, M33: from the runtime (tolerant) or by hand (strict), one rule."""
    command = issued.command
    assert isinstance(command, OwnerOutcomeFields)
    drafts: DraftOutcomes | None = load_or(
        store, draft_outcomes_id(issued.tenant_id, command.draft_id)
    )
    if drafts is None:
        drafts = DraftOutcomes.open(issued.tenant_id, command.draft_id, issued.at)
    drafts.record(command, by=issued.actor, at=issued.at)
    return Decision([drafts], drafts.active)


def note_task_closure(store: EventStore, issued: Issued) -> Decision:
    """SPEC M45: a transition is noted once; the same transition again notes nothing."""
    command = issued.command
    assert isinstance(command, TaskClosed)
    ident = closure_id(issued.tenant_id, command.transition_id)
    if load_or(store, ident) is not None:
        return Decision([], str(ident))
    noted = TaskClosure.note(
        tenant_id=issued.tenant_id, task_id=command.task_id,
        transition_id=command.transition_id, status=command.status,
        run_ids=list(dict.fromkeys(command.run_ids)), closed_at=command.closed_at, at=issued.at,
    )  # fmt: skip
    return Decision([noted], str(ident))


def appraise_closure(store: EventStore, issued: Issued) -> Decision:
    """SPEC M45: the closure's reading, decided once; a follow-up staged only if it says so."""
    command = issued.command
    assert isinstance(command, AppraiseClosure)
    closure: TaskClosure | None = load_or(
        store, closure_id(issued.tenant_id, command.transition_id)
    )
    if closure is None:
        raise NotFound(f"no closed task transition {command.transition_id!r}")
    if command.label not in Label.__members__:
        raise Refused(f"no label {command.label!r}", field="label")
    closure.appraise(
        label=Label(command.label), positive=command.positive, negative=command.negative,
        cut_short=command.cut_short, channels=list(command.channels), at=issued.at,
    )  # fmt: skip
    return Decision([closure], closure.appraised)


def record_pass_results(store: EventStore, issued: Issued) -> Decision:
    """SPEC M44: once per run and pass; a pass already recorded is left as it is."""
    command = issued.command
    assert isinstance(command, RecordPassResults)
    if load_or(store, pass_id(issued.tenant_id, command.run_id, command.kind)) is not None:
        return Decision([], False)
    recorded = PaidPass.record(
        tenant_id=issued.tenant_id, run_id=command.run_id, kind=command.kind,
        results=[r.model_dump(mode="json") for r in command.results], model=command.model,
        at=issued.at,
    )  # fmt: skip
    return Decision([recorded], True)
