"""The Digest aggregate: one tenant's week, built once and posted once (SPEC W109, W123–W128).

Its id derives from (tenant, ``digest/{week}``), so a second builder (another scheduler, a
replica, a restart) creates the same aggregate: its append conflicts, it reloads, finds the
digest and does nothing. Posting is a decision on the digest too: one ``AgentPosted`` event
per agent and the ``Posted`` stamp are appended together, and a digest that carries the stamp
never posts again (W124). The relay publishes the ``AgentPosted`` events from the store like
every other public event; the hand-over webhook, when configured, delivers the same ones.
"""

from datetime import datetime
from typing import Any
from uuid import UUID, uuid5

from eventsourcing.domain import Aggregate, event

from contracts.digests import DigestTables
from contracts.weeks import previous
from services.digests.build import AppraisesReports, as_text

DIGEST_NAMESPACE = UUID("0d5c2b7e-6a1f-5c43-9e8d-71b2f4a6c3d9")
PREVIOUS_ITEMS = 12  # W130
QUIET_WEEK = "a quiet week: no submitted reports, nothing to post (SPEC W127)"
NO_ROUTE = "no route configured: the digest stands and nothing was sent (SPEC W128)"


def digest_id_for(tenant_id: str, week: str) -> UUID:
    """The one digest of a tenant's week (W109): every builder names the same aggregate."""
    return uuid5(DIGEST_NAMESPACE, f"{tenant_id}/digest/{week}")


def feedback_path(week: str, agent_id: str) -> str:
    """The identity of an agent's weekly item (W125, W126): a redelivery is one item."""
    return f"_Digests/{week}/{agent_id}"


def item_id(instance: str, path: str) -> str:
    """W129: the consumer's id of an item is the instance plus the feedbackPath."""
    return f"{instance}/{path}"


def previous_items(instance: str, week: str, agent_id: str) -> list[str]:
    """W130: the same agent's items of the previous twelve weeks, spelled, never searched;
    nearest first, across year ends and weeks 53 (``weeks.previous``)."""
    return [
        item_id(instance, feedback_path(before, agent_id))
        for before in previous(week, PREVIOUS_ITEMS)
    ]


class Digest(Aggregate):
    class Built(Aggregate.Created):
        tenant_id: str
        week: str
        tables: dict[str, Any]

    class AgentPosted(Aggregate.Event):
        tenant_id: str
        week: str
        agent: str
        agent_id: str
        feedback_path: str
        item_id: str
        message: str
        extra_context: str
        url: str
        previous_items: list[str]

    class Posted(Aggregate.Event):
        tenant_id: str
        routes: list[str]
        identities: list[str]
        note: str | None

    class DeliveryAttempted(Aggregate.Event):
        tenant_id: str
        agent_id: str
        status_code: int | None
        error: str | None
        final: bool

    def __init__(self, tenant_id: str, week: str, tables: dict[str, Any]) -> None:
        self.tenant_id = tenant_id
        self.week = week
        self.tables = tables
        self.posted = False
        self.settled: set[str] = set()  # agents whose webhook delivery is over, either way

    @classmethod
    def build(
        cls, *, digest_id: UUID, tenant_id: str, tables: DigestTables, at: datetime
    ) -> "Digest":
        return cls._create(
            cls.Built,
            id=digest_id,
            timestamp=at,
            tenant_id=tenant_id,
            week=tables.week,
            tables=tables.model_dump(mode="json", by_alias=True),
        )

    def post(
        self,
        *,
        instance: str,
        url: str,
        routes: list[str],
        at: datetime,
        appraise: AppraisesReports,
    ) -> None:
        """Post once (W123, W124): one event per agent, then the stamp. A quiet week (W127)
        and a service with no route (W128) are stamped too, saying why nothing went out.
        ``appraise`` words the appraisal line of each agent's post."""
        if self.posted:
            return
        tables = DigestTables.model_validate(self.tables)
        if not tables.agents:
            self._posted(tenant_id=self.tenant_id, routes=routes, identities=[],
                         note=QUIET_WEEK, timestamp=at)  # fmt: skip
            return
        if not routes:
            self._posted(tenant_id=self.tenant_id, routes=[], identities=[], note=NO_ROUTE,
                         timestamp=at)  # fmt: skip
            return
        identities = []
        for table in tables.agents:
            path = feedback_path(self.week, table.agent_id)
            self._agent_posted(
                tenant_id=self.tenant_id,
                week=self.week,
                agent=table.agent,
                agent_id=table.agent_id,
                feedback_path=path,
                item_id=item_id(instance, path),
                message=as_text(table, self.week, truncated=tables.truncated, appraise=appraise),
                extra_context=table.model_dump_json(by_alias=True),
                url=url,
                previous_items=previous_items(instance, self.week, table.agent_id),
                timestamp=at,
            )
            identities.append(path)
        self._posted(
            tenant_id=self.tenant_id, routes=routes, identities=identities, note=None, timestamp=at
        )

    @event(AgentPosted)
    def _agent_posted(
        self,
        tenant_id: str,
        week: str,
        agent: str,
        agent_id: str,
        feedback_path: str,
        item_id: str,
        message: str,
        extra_context: str,
        url: str,
        previous_items: list[str],
        timestamp: datetime,
    ) -> None:
        pass  # what was posted is the event itself; the stamp follows in the same append

    @event(Posted)
    def _posted(
        self,
        tenant_id: str,
        routes: list[str],
        identities: list[str],
        note: str | None,
        timestamp: datetime,
    ) -> None:
        self.posted = True

    def record_delivery(
        self, *, agent_id: str, status_code: int | None, error: str | None, final: bool,
        at: datetime,
    ) -> None:  # fmt: skip
        """One webhook attempt for an agent's post; nothing once its delivery is settled, so
        a redelivered attempt after a restart is not recorded twice."""
        if agent_id in self.settled:
            return
        self._delivery_attempted(
            tenant_id=self.tenant_id,
            agent_id=agent_id,
            status_code=status_code,
            error=error,
            final=final,
            timestamp=at,
        )

    @event(DeliveryAttempted)
    def _delivery_attempted(
        self,
        tenant_id: str,
        agent_id: str,
        status_code: int | None,
        error: str | None,
        final: bool,
        timestamp: datetime,
    ) -> None:
        if final:
            self.settled.add(agent_id)
