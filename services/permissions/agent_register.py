"""The agent→maintainers register: one aggregate per (tenant, agent), and the reads the
handlers of every context decide with (an eval case's maintainers, a proposal's target, an
agent-owner report's addressee). It sits below the contexts so that each may read it without
importing another (decisions D25). The module path of ``AgentRegistration`` is the topic of its
events in the log: it never moves.
"""

from datetime import datetime
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.domain import Aggregate, event

from contracts.errors import RoleRequired
from services.store.event_store import EventStore
from services.store.fast_uuid5 import uuid5_in
from services.store.sealing import Personal

REGISTER_NAMESPACE = UUID("0f5c3d52-6a2e-5b1d-8f77-52c0b2a6e1d4")
register_uuid5 = uuid5_in(REGISTER_NAMESPACE)


def registration_id(tenant_id: str, agent: str) -> UUID:
    return register_uuid5(f"{tenant_id}/{agent}")


class AgentRegistration(Aggregate):
    """Who maintains one agent of one tenant, and where its issues are filed."""

    # Each maintainer's id, and whoever registered, under that person's own key (D130); a
    # change written before it had ``tenant_id`` keeps its names plain (D131).
    class Registered(Aggregate.Created):
        personal = Personal(
            names={"maintainers": "AgentMaintainer", "registered_by": "PlatformAdmin"}
        )

        tenant_id: str
        agent: str
        maintainers: list[str]
        repository: str | None
        registered_by: str

    class MaintainersReplaced(Aggregate.Event):
        personal = Personal(
            names={"maintainers": "AgentMaintainer", "replaced_by": "PlatformAdmin"}
        )

        maintainers: list[str]
        replaced_by: str
        tenant_id: str = ""

    class RepositoryNamed(Aggregate.Event):
        personal = Personal(names={"named_by": "PlatformAdmin"})

        repository: str | None
        named_by: str
        tenant_id: str = ""

    def __init__(
        self,
        tenant_id: str,
        agent: str,
        maintainers: list[str],
        repository: str | None,
        registered_by: str,
    ) -> None:
        self.tenant_id = tenant_id
        self.agent = agent
        self.maintainers = list(maintainers)
        self.repository = repository

    def register(
        self, maintainers: list[str], repository: str | None, by: str, at: datetime
    ) -> None:
        """What the register holds afterwards is what was said; an unchanged part records
        nothing (a repeated registration is no change)."""
        if sorted(set(maintainers)) != sorted(set(self.maintainers)):
            self._replace(
                maintainers=list(dict.fromkeys(maintainers)), replaced_by=by, timestamp=at,
                tenant_id=self.tenant_id,
            )  # fmt: skip
        if repository != self.repository:
            self._name(repository=repository, named_by=by, timestamp=at, tenant_id=self.tenant_id)

    @event(MaintainersReplaced)
    def _replace(
        self, maintainers: list[str], replaced_by: str, timestamp: datetime, tenant_id: str = ""
    ) -> None:
        self.maintainers = list(maintainers)

    @event(RepositoryNamed)
    def _name(
        self, repository: str | None, named_by: str, timestamp: datetime, tenant_id: str = ""
    ) -> None:
        self.repository = repository

    @classmethod
    def create(
        cls,
        tenant_id: str,
        agent: str,
        maintainers: list[str],
        repository: str | None,
        by: str,
        at: datetime,
    ) -> "AgentRegistration":
        return cls._create(
            cls.Registered,
            id=registration_id(tenant_id, agent),
            timestamp=at,
            tenant_id=tenant_id,
            agent=agent,
            maintainers=list(dict.fromkeys(maintainers)),
            repository=repository,
            registered_by=by,
        )


def registration(store: EventStore, tenant_id: str, agent: str) -> AgentRegistration | None:
    """The agent's registration in this tenant, or None. The id is derived from the tenant, so
    another tenant's registration of the same agent is another aggregate."""
    try:
        found: AgentRegistration = store.repository.get(registration_id(tenant_id, agent))
    except AggregateNotFoundError:
        return None
    return found


def maintainers_of(store: EventStore, tenant_id: str, agent: str) -> tuple[str, ...]:
    """The registered maintainers of ``agent`` in the tenant (none if it is not registered)."""
    found = registration(store, tenant_id, agent)
    return () if found is None else tuple(found.maintainers)


def require_maintainer(
    store: EventStore,
    tenant_id: str,
    actor: str,
    roles: frozenset[str] | None,
    agent: str,
    what: str,
) -> None:
    """SPEC C52 / decisions D23: an AssetMaintainer acts on the agents the register names them
    maintainer of, and no other: an agent the register does not hold has no maintainer, so
    no caller acts on it as one until a PlatformAdmin registers it. The service's own work
    (no roles) is not checked; the role itself is the command's ``permits``."""
    if roles is None or not agent:  # a case naming no agent: no register entry to ask
        return
    maintainers = maintainers_of(store, tenant_id, agent)
    if not maintainers:
        raise RoleRequired(
            f"{what}: no maintainers registered for agent {agent!r}; a PlatformAdmin "
            "registers them (PUT /factory/agents/{agent})",
            needed=("AssetMaintainer",),
        )
    if actor not in maintainers:
        raise RoleRequired(
            f"{what}: only a maintainer of agent {agent!r} in the register may",
            needed=("AssetMaintainer",),
        )
