"""Changes of an agent (its model, instructions or release), recorded once each, so that the
next night re-runs the agent's confirmed cases first (seed 000: cases are "replayed whenever
the instructions or the model change"; decisions D240–D243).

A change arrives as the registry's ``AgentChanged`` (Kafka, or ``POST /factory/events``). Its
id derives from its natural key (tenant, agent, what, to, at), so the same change announced
twice, under two CloudEvent ids, is one change. The night reads the changes from the nights
read model's part ``projections.agent_changes``; nothing here reads a clock or makes an id.
"""

from contextlib import suppress
from datetime import datetime
from uuid import UUID, uuid5

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.domain import Aggregate

from contracts.agent_changes import AgentChanged
from services.bus.decisions import Decision
from services.bus.issued import Issued
from services.permissions.agent_register import require_maintainer
from services.store.event_store import EventStore

CHANGE_NAMESPACE = UUID("3f1c6a9e-8d27-5b40-a6e1-7c2d9f0b4e58")
# Who declares a change of any agent (D241): the registry's service roles. An AssetMaintainer
# (``AGENT_CHANGERS``) declares changes of the agents the register names them maintainer of.
ANY_AGENT = frozenset(("Operator", "PlatformAdmin"))


def change_id(tenant_id: str, change: AgentChanged) -> UUID:
    key = f"{tenant_id}/agent-change/{change.agent}/{change.what}/{change.after}/{change.at}"
    return uuid5(CHANGE_NAMESPACE, key)


class AgentChange(Aggregate):
    class Recorded(Aggregate.Created):
        tenant_id: str
        agent: str
        what: str
        before: str | None
        after: str
        changed_at: str

    def __init__(
        self,
        tenant_id: str,
        agent: str,
        what: str,
        before: str | None,
        after: str,
        changed_at: str,
    ) -> None:
        self.tenant_id, self.agent, self.what = tenant_id, agent, what
        self.before, self.after, self.changed_at = before, after, changed_at

    @classmethod
    def record(cls, tenant_id: str, change: AgentChanged, *, at: datetime) -> "AgentChange":
        return cls._create(
            cls.Recorded,
            id=change_id(tenant_id, change),
            timestamp=at,
            tenant_id=tenant_id,
            agent=change.agent,
            what=change.what.value,
            before=change.before,
            after=change.after,
            changed_at=change.at.isoformat(),
        )


def change_created(issued: Issued) -> UUID:
    command = issued.command
    assert isinstance(command, AgentChanged)
    return change_id(issued.tenant_id, command)


def shown(change: AgentChange) -> dict[str, str | None]:
    return {
        "agent": change.agent,
        "what": change.what,
        "from": change.before,
        "to": change.after,
        "at": change.changed_at,
    }


def record_agent_change(store: EventStore, issued: Issued) -> Decision:
    """Record the change once (a repeat finds it and appends nothing). D241: a caller acting
    only as an AssetMaintainer must maintain the agent in the register."""
    command = issued.command
    assert isinstance(command, AgentChanged)
    if issued.roles is not None and issued.roles.isdisjoint(ANY_AGENT):
        require_maintainer(
            store, issued.tenant_id, issued.actor, issued.roles, command.agent,
            "declare a change of an agent",
        )  # fmt: skip
    if not issued.new:
        with suppress(AggregateNotFoundError):
            found: AgentChange = store.repository.get(change_id(issued.tenant_id, command))
            return Decision([], shown(found))
    change = AgentChange.record(issued.tenant_id, command, at=issued.at)
    return Decision([change], shown(change))
