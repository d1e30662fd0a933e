"""The partition Kafka's default partitioner picks for each key of a page, the page at once.

The relay fills a record batch per partition itself (``services.kafka.relay``), so it must pick the
partition aiokafka's ``send()`` would: ``DefaultPartitioner``, murmur2 of the key as Kafka's
Java client hashes it, so that one aggregate's events keep landing in the partition they always
did. aiokafka computes murmur2 in pure Python a byte at a time: 7-14 µs a 36-byte key, the
relay's largest single cost (issue 12, figure 5). No well-kept library on the package index
computes Kafka's murmur2 (mmh3 is murmur3, the murmur2 packages are years stale), so it is
written out here, and a property test holds it to aiokafka's own on arbitrary bytes.

The keys of a page are hashed side by side. Keys of one length have their n-th 32-bit word laid
out 64 bits apart ("lanes") in one Python integer, and each step of murmur2 (multiply, mask,
shift, xor) is then one operation on that integer, done in C for every key at once: about 1 µs
a key on a page of 2,000. A lane holds a value below 2**32 between steps, and a product of two
such values is below 2**64, so a multiplication never carries into the next lane; a shift to
the right brings the next lane's low bits into this lane's upper half, which the mask clears.
A few keys of one length (a page published again one by one) go through aiokafka's function.
"""

import struct
from collections.abc import Sequence

from aiokafka.partitioner import murmur2

M = 0x5BD1E995  # murmur2's multiplier
SEED = 0x9747B28C  # the seed Kafka's clients use
LANE_MASK = b"\xff\xff\xff\xff\x00\x00\x00\x00"  # one lane's low 32 bits, little-endian
FEWEST_FOR_LANES = 8  # below this, setting the lanes up costs more than it saves


def partition_of(hashed: int, partitions: Sequence[int]) -> int:
    """What ``DefaultPartitioner`` picks for a key of this murmur2, among the topic's
    partitions sorted by id."""
    return partitions[(hashed & 0x7FFFFFFF) % len(partitions)]


def murmur2_each(keys: Sequence[bytes]) -> list[int]:
    """aiokafka's ``murmur2`` of every key, in order."""
    by_length: dict[int, list[int]] = {}
    for i, key in enumerate(keys):
        by_length.setdefault(len(key), []).append(i)
    hashes = [0] * len(keys)
    for where in by_length.values():
        same = [keys[i] for i in where]
        hashed = murmur2_in_lanes(same) if len(same) >= FEWEST_FOR_LANES else map(murmur2, same)
        for i, h in zip(where, hashed, strict=True):
            hashes[i] = h
    return hashes


def murmur2_in_lanes(keys: Sequence[bytes]) -> Sequence[int]:
    """aiokafka's ``murmur2`` of keys that are all of one length, side by side."""
    count = len(keys)
    if count == 0:
        return []
    length = len(keys[0])
    joined = b"".join(keys)  # key i's byte b at i * length + b
    mask = int.from_bytes(LANE_MASK * count, "little")
    h = int.from_bytes(struct.pack("<Q", SEED ^ length) * count, "little")
    words, extra = divmod(length, 4)
    for word in range(words):
        k = lanes(joined, length, count, 4 * word, 4)
        k = (k * M) & mask
        k = (k ^ (k >> 24)) & mask
        k = (k * M) & mask
        h = ((h * M) & mask) ^ k
    if extra:  # the last 1-3 bytes, little-endian, as Java's switch over them adds them
        h ^= lanes(joined, length, count, 4 * words, extra)
        h = (h * M) & mask
    h = (h ^ (h >> 13)) & mask
    h = (h * M) & mask
    h = (h ^ (h >> 15)) & mask
    return struct.unpack(f"<{count}Q", h.to_bytes(8 * count, "little"))


def lanes(joined: bytes, length: int, count: int, start: int, size: int) -> int:
    """Bytes ``start`` to ``start + size`` of every key as one integer, a key's in each 64-bit
    lane (little-endian, as murmur2 reads its words)."""
    laid = bytearray(8 * count)
    for b in range(size):
        laid[b::8] = joined[start + b :: length]
    return int.from_bytes(laid, "little")
