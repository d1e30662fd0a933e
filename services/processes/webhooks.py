"""The outgoing webhooks the contexts declare (hand-overs of reports, the weekly digest's posts),
signed the same way to the one configured URL (SPEC W123), each delivered by its log reader."""

import logging

from contracts import topics
from services.bus.command_bus import CommandBus
from services.followers.reader import Reader
from services.processes.contexts import CONTEXTS
from services.processes.settings import Settings
from services.store.event_store import EventStore
from services.webhooks.reader import WebhookReader
from services.webhooks.signed import SignedWebhook

log = logging.getLogger("feedbackloop")


def webhook_readers(settings: Settings, store: EventStore, bus: CommandBus) -> list[Reader]:
    """The readers that deliver every context's outgoing webhooks (hand-overs first), or none
    when no webhook is configured. Each reader has a poster of its own: it opens and closes
    its HTTP client."""
    if not settings.handover_webhook_url:
        log.info("hand-over webhook: none configured (hand-overs go to Kafka only)")
        return []
    if not settings.handover_webhook_secret:
        raise ValueError("FEEDBACKLOOP_HANDOVER_WEBHOOK_SECRET is needed to sign hand-overs")
    url, secret = settings.handover_webhook_url, settings.handover_webhook_secret
    readers: list[Reader] = [
        WebhookReader(
            store,
            bus,
            webhook,
            SignedWebhook(
                url=url,
                secret=secret,
                max_attempts=settings.handover_webhook_max_attempts,
                backoff_seconds=settings.handover_webhook_backoff_seconds,
            ),
            source=settings.cloudevents_source,
        )
        for context in CONTEXTS
        for webhook in context.webhooks
    ]
    log.info("hand-over webhook: delivering to %s", url)
    return readers


def digest_routes(settings: Settings, tenant_id: str) -> tuple[str, ...]:
    """Where a tenant's digest posts go (SPEC W124): the topic when Kafka is configured (the
    relay publishes it from the store), the hand-over webhook when one is, and the tenant's
    tracker when ``FEEDBACKLOOP_TRACKERS`` names one (the triage intake files the posts from
    the log, W129-W134): a route of its own, so a tenant with only a tracker (the embedded
    default) has its digest filed (decisions D150). None says so (W128)."""
    routes = []
    if settings.kafka_bootstrap_servers:
        routes.append(f"kafka:{settings.topic_prefix}{topics.DIGEST_POSTED}")
    if settings.handover_webhook_url and settings.handover_webhook_secret:
        routes.append(f"webhook:{settings.handover_webhook_url}")
    tracker = settings.trackers.get(tenant_id)
    if tracker is not None:
        routes.append(f"tracker:{tracker.url}")
    return tuple(routes)
