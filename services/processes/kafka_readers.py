"""Kafka in and out for a runtime: the relay of its share of the log to the topics, the
inbound consumer of the commands that come over Kafka, and the topics both of them need."""

import logging

from services.bus.command_bus import CommandBus
from services.kafka.admin import ensure_topics
from services.kafka.divergence import Divergence
from services.kafka.inbound import InboundConsumer
from services.kafka.relay import Relay
from services.kafka.shares import Share
from services.permissions.sources import SourceRoles
from services.processes.contexts import SUBSCRIPTIONS
from services.processes.log_readers import LogReaders
from services.processes.process_health import INBOUND
from services.processes.published import PUBLICATIONS, TOPICS
from services.processes.settings import Settings

log = logging.getLogger("feedbackloop")


class KafkaReaders(LogReaders):
    """The Runtime's part that reads to and from Kafka (``services.processes.bootstrap``)."""

    settings: Settings
    bus: CommandBus
    consumer: InboundConsumer | None

    async def start_relay(self) -> Relay | None:
        """The relay of this process's share of the log (FEEDBACKLOOP_RELAY_SHARE)."""
        if not self.settings.kafka_bootstrap_servers:
            log.warning("relay: off (no KAFKA_BOOTSTRAP_SERVERS): events stay in the store")
            return None
        share = Share.parse(self.settings.relay_share)
        relay = Relay(
            self.settings.kafka_bootstrap_servers,
            PUBLICATIONS,
            source=self.settings.cloudevents_source,
            topic_prefix=self.settings.topic_prefix,
            prepare=self.ensure_topics,
            divergence=self.divergence(),
            share=share,
        )
        self.follow(relay)
        return relay

    def divergence(self, reader: str | None = None) -> Divergence:
        """The relay's topics compared with the store (decisions D49), from where ``reader``
        stands (by default the relay of FEEDBACKLOOP_RELAY_SHARE)."""
        assert self.settings.kafka_bootstrap_servers
        reader = reader or Share.parse(self.settings.relay_share).name
        topics = [self.settings.topic_prefix + p.topic for p in PUBLICATIONS]
        return Divergence(
            self.settings.kafka_bootstrap_servers, topics, self.store, self.pool, reader=reader
        )

    async def ensure_topics(self) -> None:
        assert self.settings.kafka_bootstrap_servers
        await ensure_topics(
            self.settings.kafka_bootstrap_servers,
            tuple(self.settings.topic_prefix + name for name in TOPICS),
            self.settings.topic_partitions,
            self.settings.topic_replication_factor,
        )

    def inbound_consumer(self) -> InboundConsumer:
        return InboundConsumer(
            self.bus,
            self.store,
            self.pool,
            SUBSCRIPTIONS,
            bootstrap=self.settings.kafka_bootstrap_servers or "localhost:9092",
            group_id=self.settings.inbound_group_id,
            topic_prefix=self.settings.topic_prefix,
            prepare=self.ensure_topics,
            sources=SourceRoles(self.settings.kafka_source_roles),
        )

    async def start_inbound(self) -> InboundConsumer | None:
        if not self.settings.kafka_bootstrap_servers:
            log.warning("inbound: off (no KAFKA_BOOTSTRAP_SERVERS): commands come over HTTP only")
            return None
        consumer = self.inbound_consumer()
        self.supervisor.start(INBOUND, lambda: consumer.run(self.stop))
        self.consumer = consumer
        return consumer
