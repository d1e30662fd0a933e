"""Name-based ids (``uuid5``) with the namespace read once: the fast twin of ``uuid.uuid5``.

Deterministic ids (a feedback's, a receipt's) are derived for every command, some twice (the
bus asks whether the aggregate exists, then the handler creates it). ``uuid.uuid5`` reads the
namespace's bytes and imports hashlib at every call; ``uuid5_in(namespace)`` answers a
function that does neither. The plain path is ``uuid.uuid5``; ``tests/unit/test_fast_paths.py``
holds the two equal for any name.
"""

from collections.abc import Callable
from hashlib import sha1
from uuid import UUID


def uuid5_in(namespace: UUID) -> Callable[[str], UUID]:
    """A function answering ``uuid5(namespace, name)`` for a name."""
    prefix = namespace.bytes

    def derive(name: str) -> UUID:
        return UUID(bytes=sha1(prefix + name.encode()).digest()[:16], version=5)

    return derive
