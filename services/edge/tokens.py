"""Bearer JWTs of the configured OAuth2 issuers (SPEC C52: services sign in by client
credentials), beside the static API keys of ``services.edge.auth``.

Each trusted issuer is one ``TrustedIssuer`` (``FEEDBACKLOOP_OAUTH_ISSUERS``,
``services.edge.token_claims``). Its keys come from the JWKS its discovery document
(``<issuer>/.well-known/openid-configuration``) names, fetched when first needed and cached by
PyJWT's ``PyJWKClient``: a token whose ``kid`` the cache lacks refetches the JWKS once, at most
once per cool-down (decisions D32), so a rotated key is picked up and a flood of made-up kids
costs the issuer nothing.

A token is refused (``Refusal``, answered 401 at the edge, its reason logged without the
token) when it is expired or not yet valid, names another audience or an unknown issuer, is
signed with ``alg: none`` or a symmetric algorithm (an HS256 token signed with the issuer's
public key as its secret is thereby refused before any key is tried), names a kid the issuer
does not publish, or lacks the claims a principal is made of (decisions D34). What a valid
token grants is ``token_claims.principal_of`` (decisions D33).
"""

import json
import logging
import threading
import time
import urllib.request
from collections.abc import Iterable
from typing import Any

import jwt

from services.edge.auth import Principal
from services.edge.token_claims import Refusal, TrustedIssuer, principal_of, shown

log = logging.getLogger(__name__)

# Only asymmetric signatures: the issuer's keys are public, so a symmetric algorithm (HS256
# keyed with the public key) would let anyone sign; "none" signs nothing.
ALGORITHMS = frozenset(
    ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]
)


def looks_like_jwt(credential: str) -> bool:
    """A compact JWS has three dot-separated parts; an API key has none."""
    return credential.count(".") == 2


class _Jwks(jwt.PyJWKClient):
    """PyJWT's JWKS client, counting and logging each fetch (the rate limit is visible)."""

    fetches = 0

    def fetch_data(self) -> Any:
        data = super().fetch_data()
        self.fetches += 1
        log.info("fetched the JWKS %s", self.uri)
        return data


class _Keys:
    """One issuer's keys: its discovery document read once, then its JWKS, cached.

    An issuer that could not be reached is not asked again for a cool-down: while it is down,
    every token of it would otherwise hold a thread for the whole timeout."""

    def __init__(self, trusted: TrustedIssuer, timeout: float, lifespan: float, cooldown: float):
        self.trusted = trusted
        self.timeout, self.lifespan, self.cooldown = timeout, lifespan, cooldown
        self._client: _Jwks | None = None
        self._lock = threading.Lock()
        self._failed_at: float | None = None
        self.failures = 0

    @property
    def fetches(self) -> int:
        return 0 if self._client is None else self._client.fetches

    def client(self) -> _Jwks:
        if self._client is None:
            self._client = _Jwks(
                self._jwks_uri(),
                lifespan=self.lifespan,
                timeout=self.timeout,
                cooldown_duration=self.cooldown,
            )
        return self._client

    def _jwks_uri(self) -> str:
        url = self.trusted.issuer.rstrip("/") + "/.well-known/openid-configuration"
        try:
            with urllib.request.urlopen(url, timeout=self.timeout) as answer:
                document = json.load(answer)
        except (OSError, ValueError) as error:
            log.error("the discovery document %s could not be read: %s", url, error)
            raise Refusal("keys-unavailable") from None
        # OpenID Connect Discovery 1.0 §4.3: the document must name the issuer it was asked of.
        if not isinstance(document, dict) or document.get("issuer") != self.trusted.issuer:
            log.error("the discovery document %s names another issuer", url)
            raise Refusal("keys-unavailable")
        uri = document.get("jwks_uri")
        if not isinstance(uri, str) or not uri.startswith(("https://", "http://")):
            log.error("the discovery document %s names no jwks_uri", url)
            raise Refusal("keys-unavailable")
        return uri

    def key(self, kid: str) -> jwt.PyJWK:
        # One lookup at a time (PyJWKClient serialises its lookups anyway): the threads that
        # waited behind a failed fetch see the failure instead of each trying again.
        with self._lock:
            return self._key(kid)

    def _key(self, kid: str) -> jwt.PyJWK:
        failed_at = self._failed_at
        if failed_at is not None and time.monotonic() - failed_at < self.cooldown:
            raise Refusal("keys-unavailable")
        try:
            return self.client().get_signing_key(kid)
        except Refusal:
            self._failed()
            raise
        except jwt.PyJWKClientConnectionError as error:
            log.error("the JWKS of %s could not be fetched: %s", self.trusted.issuer, error)
            self._failed()
            raise Refusal("keys-unavailable") from None
        except jwt.PyJWKClientError:
            raise Refusal("unknown-kid") from None

    def published(self) -> list[str]:
        with self._lock:
            try:
                found = self.client().get_signing_keys(refresh=True)
            except jwt.PyJWKClientError as error:
                log.error("the JWKS of %s could not be read: %s", self.trusted.issuer, error)
                raise Refusal("keys-unavailable") from None
        return [str(key.key_id) for key in found]

    def _failed(self) -> None:
        self._failed_at = time.monotonic()
        self.failures += 1


class TokenVerifier:
    """Verifies bearer JWTs of the trusted issuers and answers their principal."""

    def __init__(
        self,
        issuers: Iterable[TrustedIssuer],
        *,
        timeout_seconds: float = 5.0,
        jwks_lifespan_seconds: float = 300.0,
        jwks_cooldown_seconds: float = 30.0,
        leeway_seconds: float = 30.0,
    ) -> None:
        self.leeway = leeway_seconds
        self._keys = {
            trusted.issuer: _Keys(trusted, timeout_seconds, jwks_lifespan_seconds,
                                  jwks_cooldown_seconds)
            for trusted in issuers
        }  # fmt: skip

    def __bool__(self) -> bool:
        return bool(self._keys)

    def fetches(self, issuer: str) -> int:
        """How many times the JWKS of ``issuer`` has been fetched."""
        return self._keys[issuer].fetches

    def published_kids(self, issuer: str) -> list[str]:
        """The key ids ``issuer`` publishes now (its JWKS fetched afresh), or ``Refusal``."""
        return self._keys[issuer].published()

    def failures(self, issuer: str) -> int:
        """How many times ``issuer``'s discovery document or JWKS could not be fetched."""
        return self._keys[issuer].failures

    def principal(self, token: str) -> Principal:
        """The principal of a valid token, or ``Refusal`` (logged with its reason)."""
        facts: dict[str, str] = {}
        try:
            return self._verify(token, facts)
        except Refusal as refusal:
            # Structured for a log shipper (the extra fields), readable as a line too; the
            # token itself is never logged: it is a credential until it expires.
            said = " ".join(f"{name}={value}" for name, value in facts.items())
            log.warning(
                "bearer token refused: reason=%s %s",
                refusal.reason,
                said,
                extra={"reason": refusal.reason, **facts},
            )
            raise

    def _verify(self, token: str, facts: dict[str, str]) -> Principal:
        try:
            header = jwt.get_unverified_header(token)
            unverified = jwt.decode(token, options={"verify_signature": False})
        except jwt.PyJWTError:
            raise Refusal("malformed") from None
        alg, kid = str(header.get("alg")), header.get("kid")
        facts.update(alg=shown(alg, 20), kid=shown(kid, 100), iss=shown(unverified.get("iss")))
        if alg.lower() == "none":
            raise Refusal("alg-none")
        if alg not in ALGORITHMS:
            raise Refusal("alg-not-allowed")
        keys = self._keys.get(str(unverified.get("iss")))
        if keys is None:
            raise Refusal("wrong-issuer")
        if not isinstance(kid, str) or not kid:
            raise Refusal("unknown-kid")
        key = keys.key(kid)
        if key.algorithm_name != alg:  # a key is used only with the algorithm it is for
            raise Refusal("alg-not-allowed")
        trusted = keys.trusted
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=[alg],
                audience=trusted.audience,
                issuer=trusted.issuer,
                leeway=self.leeway,
                options={"require": ["exp", "iss", "aud", "sub"]},
            )
        except jwt.ExpiredSignatureError:
            raise Refusal("expired") from None
        except jwt.ImmatureSignatureError:
            raise Refusal("not-yet-valid") from None
        except jwt.InvalidAudienceError:
            raise Refusal("wrong-audience") from None
        except jwt.InvalidIssuerError:
            raise Refusal("wrong-issuer") from None
        except jwt.InvalidSignatureError:
            raise Refusal("bad-signature") from None
        except jwt.MissingRequiredClaimError as error:
            raise Refusal(f"missing-{error.claim}") from None
        except jwt.PyJWTError:
            raise Refusal("invalid") from None
        return principal_of(claims, trusted, facts)
