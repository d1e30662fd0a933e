"""Kafka's murmur2 of many keys at once: the fast twin of aiokafka's ``murmur2``.

Reference: ``aiokafka.partitioner.murmur2`` (the Java client's hash, which aiokafka computes in
pure Python a byte at a time). ``murmur2_each`` gives exactly its value for every key; a
property test holds the two together on arbitrary bytes (``tests/unit/test_relay_partitions``).
No well-kept library on the package index computes Kafka's murmur2 (mmh3 is murmur3), so it is
written out here.

How: the keys of one length have their n-th 32-bit word laid out 64 bits apart ("lanes") in
one Python integer, and each step of murmur2 (multiply, mask, shift, xor) is then one
operation on that integer, done in C for every key at once. A lane holds a value below 2**32
between steps, and a product of two such values is below 2**64, so a multiplication never
carries into the next lane; a shift to the right brings the next lane's low bits into this
lane's upper half, which the mask clears. A few keys of one length go through aiokafka's own
function, as setting the lanes up would cost more than it saves.
"""

import struct
from collections.abc import Sequence

from aiokafka.partitioner import murmur2

M = 0x5BD1E995  # murmur2's multiplier
SEED = 0x9747B28C  # the seed Kafka's clients use
LANE_MASK = b"\xff\xff\xff\xff\x00\x00\x00\x00"  # one lane's low 32 bits, little-endian
FEWEST_FOR_LANES = 8  # below this, setting the lanes up costs more than it saves


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
