"""The feedback widget's tokens: minted for an API key, checked on every use (decisions
D230–D233, docs/widget.md).

A widget token is a JWT the service signs itself (HS256). Its key is derived (HKDF) from the
key the database keeps for position tokens (``services.edge.positions``), so every process and
every replica of the API verifies what any of them minted, and nothing of it is random per
process. The token names:

- ``sub`` and ``tenant``: the minting key's subject and tenant: the widget acts as them;
- ``project`` and ``agent``: the one project its ratings are recorded under and the one agent
  whose answers it rates; ``origin``: the page it is posted from;
- ``key``: the SHA-256 of the minting key, so that each use asks the key ring whether that key
  still lives and still holds Requester: a key revoked, or a person erased (whose stored keys
  are revoked, decisions D146), takes every token minted with it along at the next request;
- ``exp``, at most ``MAX_TOKEN_MINUTES`` after ``iat``.

Its caller holds the role Requester and no scope at all: it passes the widget's routes only
(``services.edge.scopes.authorize``), every other route refuses it (403).
"""

import uuid
from datetime import datetime, timedelta

import jwt
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from contracts.widget import MAX_TOKEN_MINUTES
from services.edge.auth import KeyRing, Principal, WidgetBound
from services.edge.token_claims import Refusal

TOKEN_TYPE = "fl-widget+jwt"  # the header's typ: how a widget token is told from others
ISSUER = AUDIENCE = "feedbackloop/widget"
ALGORITHM = "HS256"
ROLE = "Requester"  # decisions D231: a widget rates and reports, as a requester does
LEEWAY_SECONDS = 5  # replicas' clocks; the lifetime itself is minutes
CLAIMS = ("exp", "iat", "iss", "aud", "sub", "tenant", "project", "agent", "origin", "key")


def widget_key(position_key: bytes) -> bytes:
    """The signing key, derived from the database's position key (never that key itself)."""
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"feedbackloop widget")
    return derived.derive(position_key)


def claims_of(
    minter: Principal, key_sha256: str, bound: WidgetBound, minutes: int, now: datetime
) -> dict[str, object]:
    """What a token says (pure: the time comes in). Refused (ValueError) beyond the bound
    lifetime: the route's body is checked first, this guards every other caller."""
    if not 1 <= minutes <= MAX_TOKEN_MINUTES:
        raise ValueError(f"a widget token lives 1 to {MAX_TOKEN_MINUTES} minutes")
    return {
        "iss": ISSUER,
        "aud": AUDIENCE,
        "sub": minter.subject,
        "tenant": minter.tenant_id,
        "project": bound.project_id,
        "agent": bound.agent,
        "origin": bound.origin,
        "key": key_sha256,
        "iat": int(now.timestamp()),
        "exp": int((now + timedelta(minutes=minutes)).timestamp()),
        "jti": str(uuid.uuid4()),
    }


class WidgetTokens:
    """Mints and verifies widget tokens under one derived key."""

    def __init__(self, key: bytes) -> None:
        self._key = key

    def mint(self, claims: dict[str, object]) -> str:
        return jwt.encode(claims, self._key, algorithm=ALGORITHM, headers={"typ": TOKEN_TYPE})

    def owns(self, credential: str) -> bool:
        """A compact JWS whose header says it is a widget token (a cheap look, no trust)."""
        if credential.count(".") != 2:
            return False
        try:
            return bool(jwt.get_unverified_header(credential).get("typ") == TOKEN_TYPE)
        except jwt.PyJWTError:
            return False

    def principal(self, credential: str, ring: KeyRing) -> Principal:
        """The caller a valid token acts as, or ``Refusal`` (answered 401)."""
        try:
            claims = jwt.decode(
                credential,
                self._key,
                algorithms=[ALGORITHM],
                audience=AUDIENCE,
                issuer=ISSUER,
                leeway=LEEWAY_SECONDS,
                options={"require": list(CLAIMS)},
            )
        except jwt.ExpiredSignatureError:
            raise Refusal("expired") from None
        except jwt.PyJWTError:
            raise Refusal("invalid") from None
        if claims["exp"] - claims["iat"] > MAX_TOKEN_MINUTES * 60:
            raise Refusal("too-long")  # never minted so: a key that leaked, or a bug
        minter = ring.holder(str(claims["key"]))
        if (
            minter is None
            or (minter.tenant_id, minter.subject) != (claims["tenant"], claims["sub"])
            or ROLE not in minter.roles
        ):
            raise Refusal("minter-gone")  # revoked, erased, or no longer a Requester
        bound = WidgetBound(str(claims["project"]), str(claims["agent"]), str(claims["origin"]))
        return Principal(
            minter.tenant_id, minter.subject, frozenset(), minter.service, frozenset({ROLE}),
            widget=bound,
        )  # fmt: skip
