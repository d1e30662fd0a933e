"""One sealed value's box: a value sealed under a data key at its place, and opened again
(decisions D42, D222, D301). ``services.store.sealing`` decides which values of an event are
sealed, under whose key, and what a box whose key is gone reads as; this is the box itself.

A sealed field is stored as ``{"sealed": "<key id>", "box": "<base64 nonce + AES-GCM>"}``
(with a list's length, or the shape of a value that is no text, so that an erased value keeps
its type and a list its count). The nonce is the first 12 bytes of the HMAC-SHA256 of the
field's place (aggregate, version, field) under the key: the same event is always stored as
the same bytes (a repeated command, the bus's fast twin of an aggregate's ``_create``), and a
place holds one value under one key. The place is also the associated data, so a box moved to
another event does not open. ``tests/unit/test_sealing_stored_form.py`` holds these bytes.
"""

from binascii import a2b_base64, b2a_base64
from collections.abc import Callable
from typing import Any
from uuid import UUID

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from services.store.fast_hmac import hmac_sha256_under

SEALED = "sealed"
BOX = "box"
LENGTH = "n"  # a sealed list's length
SHAPE = "shape"  # what a sealed value that is no text or list erases to
ITEMS = "items"  # a sealed list of records: each record's keys, so that it erases to records
NONCE = 12
# A box's plain text: a text value as its UTF-8 after this byte (decisions D222); any other
# value, and every box sealed before, as the JSON ``{"v": value}``, which never begins so.
TEXT = b"\x00"


class Sealer:
    """One data key as boxes are sealed and opened with it: the key's id as a box names it,
    its AES-GCM cipher and its HMAC, each made once for the key, not once for each box
    (decisions D222, D301)."""

    __slots__ = ("cipher", "key_id", "nonce_of", "stored_id")

    def __init__(self, key_id: UUID, key: bytes) -> None:
        self.key_id = key_id
        self.stored_id = str(key_id)
        self.cipher = AESGCM(key)
        self.nonce_of = hmac_sha256_under(key)

    def sealed(self, at: bytes, value: Any, encode: Callable[[Any], bytes]) -> dict[str, Any]:
        """``value`` as stored, sealed at the place ``at``; ``encode`` writes the JSON form."""
        if type(value) is str:  # most sealed values: an id or a person's words
            try:
                plain = TEXT + value.encode()
            except UnicodeEncodeError:  # a lone surrogate: the JSON form escapes it
                plain = encode({"v": value})
            nonce = self.nonce_of(at)[:NONCE]  # as ``box``, one call less on every command
            box = b2a_base64(nonce + self.cipher.encrypt(nonce, plain, at), newline=False)
            return {SEALED: self.stored_id, BOX: box.decode()}
        stored: dict[str, Any] = {SEALED: self.stored_id, BOX: self.box(at, encode({"v": value}))}
        if type(value) is list:
            stored[LENGTH] = len(value)  # an erased list keeps its length: counts stay
            if value and all(type(item) is dict for item in value):
                stored[ITEMS] = [sorted(item) for item in value]  # records erase to records
        else:
            stored[SHAPE] = "dict" if type(value) is dict else "other"
        return stored

    def box(self, at: bytes, plain: bytes) -> str:
        """``plain`` sealed at the place ``at``, as a box's text."""
        nonce = self.nonce_of(at)[:NONCE]
        return b2a_base64(nonce + self.cipher.encrypt(nonce, plain, at), newline=False).decode()

    def opened(self, box: str, at: bytes) -> bytes:
        """A box's plain text. Raises ``InvalidTag`` for a box that does not open at ``at``
        (changed, or another place's), ``ValueError``/``TypeError`` for one that is not
        base64."""
        raw = a2b_base64(box, strict_mode=True)
        return self.cipher.decrypt(raw[:NONCE], raw[NONCE:], at)


def place(aggregate: UUID, version: int) -> bytes:
    """An event's place, to which a field's path is added: a box's nonce's and associated
    data's."""
    return aggregate.bytes + version.to_bytes(8, "big", signed=True)


def opened_text(plain: bytes, decode: Callable[[bytes], Any]) -> Any:
    """The value a box's plain text holds; ``decode`` reads the JSON form."""
    if plain[:1] == TEXT:
        return plain[1:].decode()
    return decode(plain)["v"]
