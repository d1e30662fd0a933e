"""The master keys that wrap the data keys: the ones the settings hold, and their names.

Each data key (``services.store.data_keys``) is kept wrapped by a master key (AES key wrap,
RFC 3394) that only the settings hold (decisions D42). The first master key of the settings
wraps new data keys; every one of them unwraps, so that a key rotated away still opens what it
wrapped until ``DataKeys.rewrap`` has wrapped it again. A master key is named in the table by
``master_id``, never stored.
"""

import hashlib
from dataclasses import dataclass

from cryptography.hazmat.primitives.keywrap import aes_key_unwrap

# Used when the settings name no master key: fine for development and tests, never for data
# that matters (docs/privacy.md says how to set one).
DEVELOPMENT_MASTER_KEY = hashlib.sha256(b"feedbackloop development master key").digest()


def master_id(master: bytes) -> str:
    """A master key's name in the table: enough to know which wrapped a key, nothing more."""
    return hashlib.sha256(b"master:" + master).hexdigest()[:16]


@dataclass(frozen=True)
class MasterKeys:
    """The master keys from the settings: the first wraps new keys, every one unwraps."""

    keys: tuple[bytes, ...] = (DEVELOPMENT_MASTER_KEY,)

    def __post_init__(self) -> None:
        if not self.keys or any(len(k) not in (16, 24, 32) for k in self.keys):
            raise ValueError("a master key is 16, 24 or 32 bytes")

    @property
    def current(self) -> bytes:
        return self.keys[0]

    def unwrap(self, master: str, wrapped: bytes) -> bytes:
        for key in self.keys:
            if master_id(key) == master:
                return aes_key_unwrap(key, wrapped)
        raise LookupError(f"no master key {master} in the settings (rotated away too early?)")
