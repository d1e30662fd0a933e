"""Bearer API keys, each bound to a tenant, a subject (person or service) and scopes.

Keys are configured as JSON entries ``{"sha256": <hex of the key>, "tenant": ..., "subject":
..., "scopes": [...], "service": false, "revoked": false}`` in ``FEEDBACKLOOP_API_KEYS`` or in
the file named by ``FEEDBACKLOOP_API_KEYS_FILE``; only the key's hash is kept. ``feedbackloop
keys new`` makes one. Entries are ``ApiKeyEntry`` models, validated when the settings are read:
a bad entry stops the process at start, naming the setting and the field. ``service`` marks a
service's key, not a person's: an eval round never runs as a service (SPEC W57). An agent's
key is configured as a service's too (``service: true``): no agent writes the charter.
``revoked`` keeps an entry on record but takes its rights away: it no longer
authenticates. (Whether a confirmer's cases still run at night is the agent register's
answer, not the keys': decisions D103.)
"""

import hashlib
import hmac
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from contracts.roles import ROLES, Role
from projections.access import Standing
from services.permissions.rules import roles_of

Scope = Literal[
    "factory.feedback.write",
    "factory.feedback.read",
    "factory.evaluation.read",
    "factory.evaluation.run",
    "factory.assets.write",
]
SCOPES: tuple[Scope, ...] = get_args(Scope)


class ApiKeyEntry(BaseModel):
    """One configured key: only its SHA-256 is kept, never the key."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sha256: str = Field(pattern="^[0-9a-f]{64}$", description="hex SHA-256 of the key")
    tenant: str = Field(min_length=1)
    subject: str = Field(min_length=1)
    scopes: tuple[Scope, ...] = ()
    # None: the entry predates roles and holds what its scopes imply (decisions D26).
    roles: tuple[Role, ...] | None = None
    service: bool = False
    revoked: bool = False


API_KEY_ENTRIES = TypeAdapter(list[ApiKeyEntry])


@dataclass(frozen=True)
class WidgetBound:
    """What a widget token is bound to (decisions D231): one project and one agent of its
    tenant, posted from one origin."""

    project_id: str
    agent: str
    origin: str


@dataclass(frozen=True)
class Principal:
    tenant_id: str
    subject: str
    scopes: frozenset[str]
    service: bool = False
    roles: frozenset[str] = frozenset()
    # Set for a widget token's caller only: such a caller passes the widget's routes alone
    # (services.edge.scopes.authorize, decisions D233).
    widget: WidgetBound | None = None


class SignedTokens(Protocol):
    """Tokens the service signs itself (the widget's, ``services.edge.widget_tokens``)."""

    def owns(self, credential: str) -> bool: ...

    def principal(self, credential: str, ring: "KeyRing") -> Principal: ...


class KeyRing:
    """The keys a process authenticates with: the configured ones (settings or file), fixed
    for the ring's life, and those issued through the store with the roles granted there
    (``stand``), replaced whenever the access read model moves (decisions D29)."""

    def __init__(self, entries: Iterable[ApiKeyEntry]) -> None:
        self.entries = tuple(entries)
        # The service's own signed tokens, checked against this ring (the composition root
        # sets it once the database's key is read).
        self.signed: SignedTokens | None = None
        self.standing = Standing((), (), 0)
        self._by_hash: dict[str, Principal] = {}
        self._verified: dict[int, tuple[bytes, Principal]] = {}
        self._stand(self.standing)

    def stand(self, standing: Standing) -> None:
        """Authenticate from now on with the store's keys and grants as ``standing`` has
        them: the next request of a revoked key, or of a subject whose role was revoked,
        finds it gone. An older standing than the one held is ignored."""
        if standing.position >= self.standing.position:
            self._stand(standing)

    def _stand(self, standing: Standing) -> None:
        granted: dict[tuple[str, str], set[str]] = {}
        for tenant, subject, role in standing.grants:
            granted.setdefault((tenant, subject), set()).add(role)

        def roles(tenant: str, subject: str, own: Iterable[str] = ()) -> frozenset[str]:
            return frozenset(own) | granted.get((tenant, subject), set())

        # A stored key holds the roles granted to its subject; a configured key also those
        # it names or, naming none, those its scopes imply (decisions D26).

        by_hash = {
            key.sha256: Principal(
                key.tenant_id,
                key.subject,
                frozenset(key.scopes),
                key.service,
                roles(key.tenant_id, key.subject),
            )
            for key in standing.keys
        }
        # A configured key is the machine's own: it wins over a stored key of the same hash.
        by_hash.update(
            {
                entry.sha256: Principal(
                    entry.tenant,
                    entry.subject,
                    frozenset(entry.scopes),
                    entry.service,
                    roles(entry.tenant, entry.subject, roles_of(entry.roles, entry.scopes)),
                )
                for entry in self.entries
                if not entry.revoked  # a revoked key authenticates no one
            }
        )
        # Swapped whole, never changed in place: a request on another thread reads either
        # the old ring or the new one.
        self._by_hash, self._verified, self.standing = by_hash, {}, standing

    @classmethod
    def load(
        cls, inline: Iterable[ApiKeyEntry], file: Path | None, *, missing_ok: bool = True
    ) -> "KeyRing":
        """The entries given inline and those of the keys file, if it exists (or else, with
        ``missing_ok`` false, FileNotFoundError). The file is validated the same way; a bad
        one names the file."""
        entries = list(inline)
        if file is not None and (file.exists() or not missing_ok):
            try:
                entries += API_KEY_ENTRIES.validate_json(file.read_bytes())
            except ValueError as error:
                raise ValueError(f"FEEDBACKLOOP_API_KEYS_FILE ({file}): {error}") from None
        return cls(entries)

    def holder(self, sha256: str) -> Principal | None:
        """The principal of the live key with this hash, or None (revoked, erased, gone)."""
        return self._by_hash.get(sha256)

    def __len__(self) -> int:
        return len(self._by_hash)

    def identify(self, key: str) -> Principal | None:
        """The principal of a live key, or None.

        A key is looked up by its SHA-256: comparing hashes leaks nothing about the key.
        A key found once is remembered by this ring, so every request of a known key does
        not hash it again: under Python's hash of it, which is keyed afresh in each process,
        and its text is compared in constant time before it is trusted. Only keys that
        matched an entry are remembered, so there are never more than the ring's live
        entries; what is remembered is forgotten whenever the store's keys and grants move
        (``stand``), and a key revoked in the settings stops working when the ring is
        loaded again."""
        verified = self._verified
        seen = verified.get(hash(key))
        if seen is not None and hmac.compare_digest(seen[0], key.encode()):
            return seen[1]
        principal = self._by_hash.get(hash_key(key))
        if principal is not None:
            verified[hash(key)] = (key.encode(), principal)
        return principal


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def new_key(
    tenant: str,
    subject: str,
    scopes: list[str],
    *,
    service: bool = False,
    roles: list[str] | None = None,
) -> tuple[str, dict[str, Any]]:
    """A fresh random key and the entry to configure for it (as JSON-ready data). Without
    ``roles`` the entry names none: it holds what its scopes imply (decisions D26)."""
    key = "fl_" + secrets.token_urlsafe(32)
    entry = {"sha256": hash_key(key), "tenant": tenant, "subject": subject, "scopes": scopes}
    return key, {**entry, "service": service, **({"roles": roles} if roles is not None else {})}


EVERY_ROLE: list[str] = list(ROLES)  # the embedded default's development key (D26)
