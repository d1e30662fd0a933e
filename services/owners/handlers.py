"""Command handlers of an agent's webhook: load, decide, hand back for the bus to append.

Who (decisions D190): a maintainer the register names for this agent, or a PlatformAdmin of
the tenant (the command's ``permits`` holds both roles; the register is asked here, once the
agent is known). An agent the register does not hold has no webhook: 404 to an admin, the
register's own refusal to a maintainer (``require_maintainer``, SPEC C52).
"""

from eventsourcing.application import AggregateNotFoundError

from contracts.agent_webhooks import (
    AgentWebhookShown,
    AgentWebhookWithdrawn,
    SubscribeAgentWebhook,
    WithdrawAgentWebhook,
)
from contracts.errors import NotFound, echoed
from services.bus.decisions import Decision
from services.bus.issued import Issued
from services.owners.domain import AgentWebhook, agent_webhook_id
from services.permissions.agent_register import registration, require_maintainer
from services.store.event_store import EventStore

ADMIN_ROLE = "PlatformAdmin"


def may_set(store: EventStore, issued: Issued, agent: str, what: str) -> None:
    """D190: a PlatformAdmin of the tenant, or a maintainer of this agent in the register."""
    if registration(store, issued.tenant_id, agent) is None:
        raise NotFound(f"no agent {echoed(agent)!r} in the register", field="agent")
    roles = issued.roles
    if roles is not None and ADMIN_ROLE not in roles:
        require_maintainer(store, issued.tenant_id, issued.actor, roles, agent, what)


def webhook_of(store: EventStore, tenant_id: str, agent: str) -> AgentWebhook | None:
    try:
        found: AgentWebhook = store.repository.get(agent_webhook_id(tenant_id, agent))
    except AggregateNotFoundError:
        return None
    return found


def subscribe(store: EventStore, issued: Issued) -> Decision:
    command = issued.command
    assert isinstance(command, SubscribeAgentWebhook)
    may_set(store, issued, command.agent, "setting an agent's webhook")
    webhook = webhook_of(store, issued.tenant_id, command.agent)
    if webhook is None:
        webhook = AgentWebhook.start(issued.tenant_id, command.agent, issued.at)
    webhook.subscribe(command.url, command.secret, by=issued.actor, at=issued.at)
    return Decision([webhook], shown(webhook, secret=command.secret))


def withdraw(store: EventStore, issued: Issued) -> Decision:
    command = issued.command
    assert isinstance(command, WithdrawAgentWebhook)
    may_set(store, issued, command.agent, "withdrawing an agent's webhook")
    webhook = webhook_of(store, issued.tenant_id, command.agent)
    if webhook is None or not webhook.active:
        raise NotFound(f"agent {echoed(command.agent)!r} has no webhook", field="agent")
    webhook.withdraw(by=issued.actor, at=issued.at)
    return Decision([webhook], AgentWebhookWithdrawn(agent=command.agent, withdrawn=True))


def shown(webhook: AgentWebhook, *, secret: str | None = None) -> AgentWebhookShown:
    assert webhook.url is not None
    assert webhook.subscribed_at is not None
    return AgentWebhookShown(
        agent=webhook.agent, url=webhook.url, subscribed_by=webhook.subscribed_by or "",
        subscribed_at=webhook.subscribed_at.isoformat(), secret=secret,
    )  # fmt: skip
