"""HMAC-SHA256 under one key with the key's two padded states hashed once: the fast twin of
``hmac.new(key, message, hashlib.sha256).digest()``.

Every sealed field's nonce is an HMAC of its place under the data key (decisions D42, D301),
on the path of every command that seals one. ``hmac.new`` pads the key and hashes both pads at each
call; ``hmac_sha256_under(key)`` answers a function that copies the two hashes it made once
and feeds them the message, which is HMAC as RFC 2104 defines it, at about half the cost. The
plain path is ``hmac.new``; ``tests/unit/test_fast_paths.py`` holds the two equal for any key
and message.
"""

from collections.abc import Callable
from hashlib import sha256

BLOCK = 64  # SHA-256's block, in bytes
INNER_PAD = bytes(byte ^ 0x36 for byte in range(256))  # each byte of the key xor 0x36
OUTER_PAD = bytes(byte ^ 0x5C for byte in range(256))


def hmac_sha256_under(key: bytes) -> Callable[[bytes], bytes]:
    """A function answering ``hmac.new(key, message, sha256).digest()`` for a message."""
    if len(key) > BLOCK:
        key = sha256(key).digest()
    padded = key.ljust(BLOCK, b"\x00")
    inner = sha256(padded.translate(INNER_PAD))
    outer = sha256(padded.translate(OUTER_PAD))

    def digest(message: bytes) -> bytes:
        hashed = inner.copy()
        hashed.update(message)
        result = outer.copy()
        result.update(hashed.digest())
        return result.digest()

    return digest
