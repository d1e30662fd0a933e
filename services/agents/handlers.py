"""Command handler of the agent register: load, decide, hand back for the bus to append."""

from contracts.agent_register import RegisterAgentCommand, RegisteredAgent
from services.bus.decisions import Decision
from services.bus.issued import Issued
from services.permissions.agent_register import AgentRegistration, registration
from services.store.event_store import EventStore


def register_agent(store: EventStore, issued: Issued) -> Decision:
    """Register an agent, or replace what the register says of it (PlatformAdmin, D25)."""
    command = issued.command
    assert isinstance(command, RegisterAgentCommand)
    said = command.registration
    found = registration(store, issued.tenant_id, command.agent)
    if found is None:
        found = AgentRegistration.create(
            issued.tenant_id, command.agent, list(said.maintainers), said.repository,
            by=issued.actor, at=issued.at,
        )  # fmt: skip
    else:
        found.register(list(said.maintainers), said.repository, by=issued.actor, at=issued.at)
    return Decision([found], shown(found))


def registered_now(store: EventStore, issued: Issued) -> RegisteredAgent:
    """What a registration repeated under its Idempotency-Key answers: what the register
    holds now (the same request was applied before; nothing is decided again)."""
    command = issued.command
    assert isinstance(command, RegisterAgentCommand)
    found = registration(store, issued.tenant_id, command.agent)
    if found is None:  # applied before, so it is there; an empty answer never 500s
        return RegisteredAgent(agent=command.agent, maintainers=[], repository=None)
    return shown(found)


def shown(found: AgentRegistration) -> RegisteredAgent:
    return RegisteredAgent(
        agent=found.agent, maintainers=list(found.maintainers), repository=found.repository
    )
