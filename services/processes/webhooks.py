"""The outgoing webhooks: hand-overs of reports and the weekly digest's posts, signed the same
way to the one configured URL (SPEC W123), each delivered by its log reader."""

import logging

from contracts import topics
from services.bus.command_bus import CommandBus
from services.digests.webhook import DigestWebhook
from services.followers.follower import Reader
from services.processes.settings import Settings
from services.reports.webhook import HandOverWebhook, SignedWebhook
from services.store.event_store import EventStore

log = logging.getLogger("feedbackloop")


def webhook_readers(settings: Settings, store: EventStore, bus: CommandBus) -> list[Reader]:
    """The readers that deliver to the hand-over webhook, or none when none is configured."""
    if not settings.handover_webhook_url:
        log.info("hand-over webhook: none configured (hand-overs go to Kafka only)")
        return []
    if not settings.handover_webhook_secret:
        raise ValueError("FEEDBACKLOOP_HANDOVER_WEBHOOK_SECRET is needed to sign hand-overs")
    hand_over = HandOverWebhook(
        store,
        bus,
        url=settings.handover_webhook_url,
        secret=settings.handover_webhook_secret,
        source=settings.cloudevents_source,
        max_attempts=settings.handover_webhook_max_attempts,
        backoff_seconds=settings.handover_webhook_backoff_seconds,
    )
    signed = SignedWebhook(
        url=settings.handover_webhook_url,
        secret=settings.handover_webhook_secret,
        max_attempts=settings.handover_webhook_max_attempts,
        backoff_seconds=settings.handover_webhook_backoff_seconds,
    )
    digests = DigestWebhook(store, bus, signed, source=settings.cloudevents_source)
    log.info("hand-over webhook: delivering to %s", settings.handover_webhook_url)
    return [hand_over, digests]


def digest_routes(settings: Settings) -> tuple[str, ...]:
    """Where a digest's posts go (SPEC W124): the topic when Kafka is configured (the relay
    publishes it from the store) and the hand-over webhook when one is; none says so."""
    routes = []
    if settings.kafka_bootstrap_servers:
        routes.append(f"kafka:{settings.topic_prefix}{topics.DIGEST_POSTED}")
    if settings.handover_webhook_url and settings.handover_webhook_secret:
        routes.append(f"webhook:{settings.handover_webhook_url}")
    return tuple(routes)
