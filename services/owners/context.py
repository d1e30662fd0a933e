"""The owners context, declared once: an agent's webhook, where its maintainers hear of it
(decisions D190-D196). Its outbox and sender run beside the hand-over webhooks
(``Runtime.start_agent_webhooks``)."""

from fastapi import APIRouter

from contracts.agent_webhooks import SubscribeAgentWebhook, WithdrawAgentWebhook
from services.declaration import Command, Context, Given
from services.edge.http import Http
from services.owners.api import operations_routes, owned_routes, webhook_routes
from services.owners.handlers import subscribe, withdraw
from services.permissions.rules import OWNERS as OWNER_ROLES


def both(http: Http, given: Given) -> APIRouter:
    router = APIRouter()
    router.include_router(webhook_routes(http, given.store))
    router.include_router(operations_routes(http))
    router.include_router(owned_routes(http))
    return router


OWNERS = Context(
    "owners",
    commands=(
        Command(SubscribeAgentWebhook, subscribe, permits=OWNER_ROLES),
        Command(WithdrawAgentWebhook, withdraw, permits=OWNER_ROLES),
    ),
    routes=lambda http, given: both(http, given),
)
