"""Command handlers of nights: load, decide, hand back for the bus to append.

Planning creates the night once: when another planner created it first, the handler answers
the existing night and appends nothing (the bus redoes a conflicting create, which then finds
it), so two schedulers or replicas plan one night (W92).
"""

from uuid import UUID

from eventsourcing.application import AggregateNotFoundError

from contracts.nights import FinishNight, FinishNightCase, PlanTenantNight, RecordNightConversation
from services.bus.decisions import Decision
from services.bus.issued import Issued
from services.nightly.domain import Night, night_id
from services.store.event_store import EventStore
from services.store.owners import load_owned


def load_night(store: EventStore, tenant_id: str, night: UUID) -> Night:
    found: Night = load_owned(store, tenant_id, night, "night")
    return found


def planned_id(issued: Issued) -> UUID:
    command = issued.command
    assert isinstance(command, PlanTenantNight)
    return night_id(issued.tenant_id, command.date.isoformat())


def plan_tenant_night(store: EventStore, issued: Issued) -> Decision:
    command = issued.command
    assert isinstance(command, PlanTenantNight)
    date = command.date.isoformat()
    if not issued.new:
        try:
            existing: Night = store.repository.get(night_id(issued.tenant_id, date))
            return Decision([], existing)  # planned already: the first create won
        except AggregateNotFoundError:
            pass
    night = Night.plan(
        tenant_id=issued.tenant_id,
        date=date,
        inputs={**command.inputs, "now": command.now.isoformat()},
        selected=command.selected,
        lines=command.lines,
        note=command.note,
        at=issued.at,
    )
    return Decision([night], night)


def record_night_conversation(store: EventStore, issued: Issued) -> Decision:
    command = issued.command
    assert isinstance(command, RecordNightConversation)
    night = load_night(store, issued.tenant_id, command.night_id)
    night.record_conversation(str(command.case_id), command.index, command.thread, at=issued.at)
    return Decision([night], night)


def finish_night_case(store: EventStore, issued: Issued) -> Decision:
    command = issued.command
    assert isinstance(command, FinishNightCase)
    night = load_night(store, issued.tenant_id, command.night_id)
    night.finish_case(command.line, at=issued.at)
    return Decision([night], night)


def finish_night(store: EventStore, issued: Issued) -> Decision:
    command = issued.command
    assert isinstance(command, FinishNight)
    night = load_night(store, issued.tenant_id, command.night_id)
    night.finish(at=issued.at)
    return Decision([night], night)
