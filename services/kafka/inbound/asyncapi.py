"""The inbound subscribers as FastStream declares them, for the AsyncAPI document only
(``services.processes.documents`` declares the contexts' subscriptions with it): the messages
are consumed by ``InboundConsumer`` (see there why not by FastStream)."""

from collections.abc import Sequence
from typing import Annotated, Any

from faststream import AckPolicy
from faststream.kafka import KafkaBroker
from pydantic import WithJsonSchema

from contracts.envelope import self_contained_schema
from services.kafka.inbound.subscription import Subscription


def declare_subscribers(
    broker: KafkaBroker,
    subscriptions: Sequence[Subscription],
    *,
    group_id: str,
    topic_prefix: str = "",
) -> None:
    """One FastStream subscriber per declared subscription, showing its envelope's schema.
    Never start a broker that carries them: their handlers refuse to run."""
    for subscription in subscriptions:
        # The body is read by the consumer, never by FastStream; the schema shown is the
        # envelope's.
        body: Any = Annotated[bytes, WithJsonSchema(self_contained_schema(subscription.envelope))]

        async def documented(message: body) -> None:
            raise RuntimeError("inbound messages are consumed by InboundConsumer, not FastStream")

        broker.subscriber(
            topic_prefix + subscription.topic,
            group_id=group_id,
            auto_offset_reset="earliest",
            ack_policy=AckPolicy.NACK_ON_ERROR,
            title=subscription.title,
            description=subscription.description,
        )(documented)
