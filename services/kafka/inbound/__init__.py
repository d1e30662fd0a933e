"""Commands and other services' events arriving on Kafka: one generic path for every message
type a context declares (``Subscription``), run by ``InboundConsumer``.

A poll's messages from one partition are parsed (every attribute and field bounded), admitted,
and applied together through the command bus: one transaction holds their events, a receipt per
command identity (CloudEvent ``source`` + ``id``) and one tracking record, the partition's
position. Identity, never the offset, decides whether a command was applied, so a recreated
topic or a replayed partition neither drops nor doubles one. A message that is malformed or
refused goes to ``<topic>.dlt`` with the reason, its original headers and coordinates; one that
cannot be written there is parked in PostgreSQL (``parked``, reader ``inbound``). Offsets are
committed to Kafka only after all that, and the partition moves on.

Trust boundary: the tenant and the actor ride as CloudEvents extension attributes
(``tenantid``, ``actor``). Whoever may write to a command topic may act for any tenant, so who
may write there is the broker's ACL's business.
"""

from services.kafka.inbound.consumer import InboundConsumer
from services.kafka.inbound.parking import ensure_inbound_tables
from services.kafka.inbound.subscription import Subscription

__all__ = [
    "InboundConsumer",
    "Subscription",
    "ensure_inbound_tables",
]
