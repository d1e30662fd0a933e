"""Positions as the API shows them: an opaque token per tenant, not the log's global number.

A write answers ``position``; a read takes it back as ``minPosition`` to see its own write. The
global notification id would tell a tenant how much every other tenant wrote meanwhile, so it
is sealed (AES-GCM) with the tenant as associated data: a token reveals nothing, and a token
of another tenant or one tampered with fails to open. The key is kept in the
database, made by whichever process starts first, so every replica opens every token.
"""

import base64
import binascii
import os
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from contracts.errors import Refused

KEYS_TABLE = "feedbackloop_keys"
POSITION_KEY = "position-token"
_NONCE = 12
_POSITION_BYTES = 8  # a position is sealed as 8 bytes, big-endian: below 2**63, as in the log
FIELD = "minPosition"


async def ensure_position_key(pool: Any) -> bytes:
    """The key that seals positions, made once per database (every replica reads the same).
    Call it at start under the start-up DDL lock (services/processes/opening.py)."""
    await pool.execute(
        f"CREATE TABLE IF NOT EXISTS {KEYS_TABLE} (name text PRIMARY KEY, key bytea NOT NULL)"
    )
    await pool.execute(
        f"INSERT INTO {KEYS_TABLE} (name, key) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        POSITION_KEY,
        AESGCM.generate_key(bit_length=256),
    )
    key: bytes = await pool.fetchval(f"SELECT key FROM {KEYS_TABLE} WHERE name = $1", POSITION_KEY)
    return key


class PositionSeal:
    def __init__(self, key: bytes) -> None:
        self._aead = AESGCM(key)

    def seal(self, position: int, tenant_id: str) -> str:
        return self._seal(position.to_bytes(_POSITION_BYTES, "big"), tenant_id)

    def open(self, token: str, tenant_id: str, field: str = FIELD) -> int:
        """The position in a token this tenant was given; anything else is refused.

        A sort key's cursor (``seal_text``) opens with the same key: its text is no position
        (read as one, it would be a number past 64 bits that fails the statement), so it is
        refused as a cursor of another list is."""
        plain = self._open(token, tenant_id, field)
        position = int.from_bytes(plain, "big")
        if len(plain) != _POSITION_BYTES or position >= 2**63:
            raise refused(field)
        return position

    def seal_text(self, text: str, tenant_id: str) -> str:
        """A cursor of a list not ordered by position (a date, a name, a sort key), sealed as
        positions are: opaque, and the tenant's own."""
        return self._seal(text.encode(), tenant_id)

    def open_text(self, token: str, tenant_id: str, field: str) -> str:
        """The text in a token this tenant was given; a position's token is 8 bytes that
        need not be UTF-8 text (it would fail to decode: a 500), refused as any other."""
        try:
            return self._open(token, tenant_id, field).decode()
        except UnicodeDecodeError:
            raise refused(field) from None

    def _seal(self, plain: bytes, tenant_id: str) -> str:
        nonce = os.urandom(_NONCE)
        sealed = self._aead.encrypt(nonce, plain, tenant_id.encode())
        return base64.urlsafe_b64encode(nonce + sealed).rstrip(b"=").decode()

    def _open(self, token: str, tenant_id: str, field: str) -> bytes:
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
            return self._aead.decrypt(raw[:_NONCE], raw[_NONCE:], tenant_id.encode())
        except (ValueError, binascii.Error, InvalidTag):
            raise refused(field) from None


def refused(field: str) -> Refused:
    return Refused(
        f"{field} is not a position this tenant was given: pass back one the service answered",
        field=field,
    )
