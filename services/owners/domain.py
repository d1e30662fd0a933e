"""An agent's webhook subscription: one aggregate per (tenant, agent) (decisions D190). The
module path of ``AgentWebhook`` is the topic of its events in the log: it never moves.

A subscription is set (the URL and a secret the door made, D191) and withdrawn; setting it
again replaces both, so a leaked secret is rotated by a PUT. Time comes in with the command.
"""

from datetime import datetime
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from services.store.fast_uuid5 import uuid5_in
from services.store.sealing import Personal

WEBHOOK_NAMESPACE = UUID("6b1f0e0a-31c4-5d0e-9a52-4f3d8e7c2a19")
webhook_uuid5 = uuid5_in(WEBHOOK_NAMESPACE)


def agent_webhook_id(tenant_id: str, agent: str) -> UUID:
    return webhook_uuid5(f"{tenant_id}/{agent}")


class AgentWebhook(Aggregate):
    """Where one agent's notices go, if anywhere."""

    class Started(Aggregate.Created):
        tenant_id: str
        agent: str

    # The maintainer's id under their own key (D130): the URL and the secret name nobody.
    class Subscribed(Aggregate.Event):
        personal = Personal(names={"subscribed_by": "AssetMaintainer"})

        tenant_id: str
        url: str
        secret: str
        subscribed_by: str

    class Withdrawn(Aggregate.Event):
        personal = Personal(names={"withdrawn_by": "AssetMaintainer"})

        tenant_id: str
        withdrawn_by: str

    def __init__(self, tenant_id: str, agent: str) -> None:
        self.tenant_id, self.agent = tenant_id, agent
        self.url: str | None = None
        self.secret: str | None = None
        self.subscribed_by: str | None = None
        self.subscribed_at: datetime | None = None

    @property
    def active(self) -> bool:
        return self.url is not None

    def subscribe(self, url: str, secret: str, by: str, at: datetime) -> None:
        self._subscribe(tenant_id=self.tenant_id, url=url, secret=secret, subscribed_by=by,
                        timestamp=at)  # fmt: skip

    def withdraw(self, by: str, at: datetime) -> bool:
        """Withdraw; a subscription already withdrawn records nothing (answers False)."""
        if not self.active:
            return False
        self._withdraw(tenant_id=self.tenant_id, withdrawn_by=by, timestamp=at)
        return True

    @event(Subscribed)
    def _subscribe(
        self, tenant_id: str, url: str, secret: str, subscribed_by: str, timestamp: datetime
    ) -> None:
        self.url, self.secret, self.subscribed_by = url, secret, subscribed_by
        self.subscribed_at = timestamp

    @event(Withdrawn)
    def _withdraw(self, tenant_id: str, withdrawn_by: str, timestamp: datetime) -> None:
        self.url = self.secret = self.subscribed_by = self.subscribed_at = None

    @classmethod
    def start(cls, tenant_id: str, agent: str, at: datetime) -> "AgentWebhook":
        return cls._create(
            cls.Started, id=agent_webhook_id(tenant_id, agent), timestamp=at,
            tenant_id=tenant_id, agent=agent,
        )  # fmt: skip
