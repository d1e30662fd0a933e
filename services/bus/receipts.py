"""Applied at most once: a command with an ``identity`` (a CloudEvent's ``source`` + ``id``,
or an Idempotency-Key) creates a ``Receipt`` whose id derives from the identity, with its
events, in the same transaction.

A receipt rather than trusting each handler, because not every effect is a create with a
deterministic id (a command that moves an existing aggregate would move it twice); a receipt
rather than a table of our own, because the library's transaction is the only one the events
commit in. A second receipt for the same identity fails the append with the library's
IntegrityError; the bus then redoes the batch one command at a time, and a command whose
receipt exists is answered ``already_applied``. The ``Receipt`` aggregate itself stays in
``services.bus.command_bus``: its module path is the topic stored with every receipt.
"""

from functools import lru_cache
from uuid import UUID

from services.store.fast_uuid5 import uuid5_in

RECEIPT_NAMESPACE = UUID("41b01990-769e-4b63-86c5-4b9edb75c11d")
receipt_uuid5 = uuid5_in(RECEIPT_NAMESPACE)


@lru_cache(maxsize=8192)
def receipt_id(identity: str) -> UUID:
    """``uuid5(RECEIPT_NAMESPACE, identity)``. Cached: the consumer asks for a poll's receipts
    by id, then the bus records them, so each id is derived twice within moments."""
    return receipt_uuid5(identity)
