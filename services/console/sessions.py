"""The console's session: a cookie that carries, sealed, the bearer the person signed in with.

The cookie holds the API key or the issuer's access token the person proved, sealed with
AES-GCM under a key kept in the database (every replica opens every cookie), next to the CSRF
token and the session's two clocks. Each request opens it and authorizes the bearer again,
exactly as the API does with an ``Authorization`` header: a key revoked or a role taken away
ends the session at the next request, and the console can never do more than the bearer could
(decisions D59). Each session has an id of its own, sealed with it: signing out, or a
PlatformAdmin ending all of a person's sessions, records the end as an event of the tenant,
and every process refuses a copy of the cookie from its next request on (decisions D122).
"""

import base64
import binascii
import os
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

import orjson
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from services.edge.positions import KEYS_TABLE

COOKIE = "fl_console"
SESSION_KEY = "console-session"
_NONCE = 12
_PURPOSE = b"feedbackloop console session"


@dataclass(frozen=True)
class Session:
    """Who signed in (the bearer, and how: ``key``, ``developer`` or ``oidc``), the CSRF token
    every form and htmx request must echo, when the session began and was last used, the
    roles the bearer held then (one taken away since ends the session) and the session's id,
    by which the server ends it (decisions D122)."""

    bearer: str
    via: str
    csrf: str
    started: datetime
    seen: datetime
    roles: tuple[str, ...] = ()
    id: str = ""

    def expired(self, now: datetime, idle: timedelta, absolute: timedelta) -> bool:
        return now - self.seen > idle or now - self.started > absolute

    def touched(self, now: datetime) -> "Session":
        return replace(self, seen=now)


def new_session(bearer: str, via: str, now: datetime, roles: Iterable[str] = ()) -> Session:
    csrf, session_id = secrets.token_urlsafe(24), secrets.token_urlsafe(16)
    return Session(bearer, via, csrf, now, now, tuple(sorted(roles)), session_id)


async def ensure_session_key(pool: Any) -> bytes:
    """The key that seals the console's cookies, made once per database beside the position
    key (``services.edge.positions``), so every replica opens every session."""
    await pool.execute(
        f"CREATE TABLE IF NOT EXISTS {KEYS_TABLE} (name text PRIMARY KEY, key bytea NOT NULL)"
    )
    await pool.execute(
        f"INSERT INTO {KEYS_TABLE} (name, key) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        SESSION_KEY,
        AESGCM.generate_key(bit_length=256),
    )
    key: bytes = await pool.fetchval(f"SELECT key FROM {KEYS_TABLE} WHERE name = $1", SESSION_KEY)
    return key


class SessionSeal:
    def __init__(self, key: bytes) -> None:
        self._aead = AESGCM(key)

    @classmethod
    def ephemeral(cls) -> "SessionSeal":
        """A seal of a key of its own, known to this process only."""
        return cls(AESGCM.generate_key(bit_length=256))

    def seal(self, session: Session) -> str:
        plain = orjson.dumps(
            {
                "b": session.bearer,
                "v": session.via,
                "c": session.csrf,
                "s": session.started.isoformat(),
                "t": session.seen.isoformat(),
                "r": session.roles,
                "i": session.id,
            }
        )
        return self.seal_text(plain.decode())

    def seal_text(self, text: str) -> str:
        """Any text the console keeps in the browser and must read back untouched."""
        nonce = os.urandom(_NONCE)
        sealed = self._aead.encrypt(nonce, text.encode(), _PURPOSE)
        return base64.urlsafe_b64encode(nonce + sealed).rstrip(b"=").decode()

    def open_text(self, cookie: str) -> str | None:
        """The text of a cookie this service sealed, or None (tampered, foreign, old)."""
        try:
            raw = base64.urlsafe_b64decode(cookie + "=" * (-len(cookie) % 4))
            return self._aead.decrypt(raw[:_NONCE], raw[_NONCE:], _PURPOSE).decode()
        except (ValueError, binascii.Error, InvalidTag):
            return None

    def open(self, cookie: str) -> Session | None:
        """The session in a cookie this service sealed, or None (tampered, foreign, old)."""
        text = self.open_text(cookie)
        if text is None:
            return None
        try:
            data = orjson.loads(text)
            return Session(
                data["b"],
                data["v"],
                data["c"],
                datetime.fromisoformat(data["s"]),
                datetime.fromisoformat(data["t"]),
                tuple(data["r"]),
                data["i"],  # a cookie sealed before sessions had ids is no session
            )
        except (ValueError, KeyError, TypeError):
            return None
