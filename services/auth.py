"""Bearer API keys, each bound to a tenant, a subject (person or service) and scopes.

Keys are configured as JSON entries ``{"sha256": <hex of the key>, "tenant": ..., "subject":
..., "scopes": [...], "service": false}`` in ``FEEDBACKLOOP_API_KEYS`` or in the file named by
``FEEDBACKLOOP_API_KEYS_FILE``; only the key's hash is kept. ``feedbackloop keys new`` makes
one. ``service`` marks a service's key, not a person's: an eval round never runs as a service
(SPEC W57).
"""

import hashlib
import json
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCOPES = (
    "factory.feedback.write",
    "factory.feedback.read",
    "factory.evaluation.read",
    "factory.evaluation.run",
    "factory.assets.write",
)


@dataclass(frozen=True)
class Principal:
    tenant_id: str
    subject: str
    scopes: frozenset[str]
    service: bool = False


class KeyRing:
    def __init__(self, entries: list[dict[str, Any]]) -> None:
        self._by_hash: dict[str, Principal] = {}
        for entry in entries:
            unknown = set(entry.get("scopes", ())) - set(SCOPES)
            if unknown:
                raise ValueError(f"API key for {entry.get('subject')}: unknown scopes {unknown}")
            self._by_hash[entry["sha256"]] = Principal(
                entry["tenant"],
                entry["subject"],
                frozenset(entry.get("scopes", ())),
                bool(entry.get("service", False)),
            )

    @classmethod
    def load(cls, inline: str | None, file: Path | None) -> "KeyRing":
        entries: list[dict[str, Any]] = []
        if inline:
            entries += json.loads(inline)
        if file is not None and file.exists():
            entries += json.loads(file.read_text())
        return cls(entries)

    def __len__(self) -> int:
        return len(self._by_hash)

    def identify(self, key: str) -> Principal | None:
        # Looked up by the key's SHA-256: comparing hashes leaks nothing about the key.
        return self._by_hash.get(hash_key(key))


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def new_key(
    tenant: str, subject: str, scopes: list[str], *, service: bool = False
) -> tuple[str, dict[str, Any]]:
    """A fresh random key and the entry to configure for it."""
    key = "fl_" + secrets.token_urlsafe(32)
    entry = {"sha256": hash_key(key), "tenant": tenant, "subject": subject, "scopes": scopes}
    return key, {**entry, "service": service}
