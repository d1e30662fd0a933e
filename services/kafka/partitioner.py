"""The partition Kafka's default partitioner picks for a key.

The relay fills a record batch per partition itself (``services.kafka.relay``), so it must pick
the partition aiokafka's ``send()`` would: ``DefaultPartitioner``, murmur2 of the key as Kafka's
Java client hashes it (``services.kafka.murmur2`` hashes a page's keys at once), so that one
aggregate's events keep landing in the partition they always did.
"""

from collections.abc import Sequence


def partition_of(hashed: int, partitions: Sequence[int]) -> int:
    """What ``DefaultPartitioner`` picks for a key of this murmur2, among the topic's
    partitions sorted by id."""
    return partitions[(hashed & 0x7FFFFFFF) % len(partitions)]
