"""A real OpenID Connect issuer for the bearer-token tests (decisions D32–D34): its clients,
a runtime that trusts it, and the attacks, which are tokens made here (alg none, HS256 keyed
with the public key, an unknown kid, and the issuer's own key signing an expired,
not-yet-valid, wrongly addressed or foreign token). The success paths use only tokens the
issuer issued (``Issuer.token``: a real client-credentials grant)."""

import base64
import hashlib
import hmac
import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jwt
import oidc_issuer
import pytest

from contracts.roles import ROLES
from services.processes.bootstrap import Runtime
from services.processes.settings import Settings
from tests.conftest import Keys, client_for, settings_for
from tests.servers import ROOT  # noqa: F401  (ops/ on sys.path; tests/conftest.py imported it already)

AUDIENCE = "urn:feedbackloop"
TENANT_A, TENANT_B = f"oauth-a-{uuid.uuid4().hex[:6]}", f"oauth-b-{uuid.uuid4().hex[:6]}"
# A tenant the issuer's clients may name but the service does not trust it for (D102).
TENANT_ELSEWHERE = f"oauth-elsewhere-{uuid.uuid4().hex[:6]}"
SCOPES = "factory.feedback.write factory.feedback.read"
# The development issuer's bound (decisions D102): it speaks for tenants A and B and grants
# every role but PlatformAdmin; a test that needs an admin's token widens it (``with_issuer``).
TENANTS = (TENANT_A, TENANT_B)
BOUND_ROLES = tuple(role for role in ROLES if role != "PlatformAdmin")
CLIENTS = [
    oidc_issuer.Client(
        "svc-a", "secret-a", SCOPES,
        {"tenant": TENANT_A, "roles": ["Reviewer", "Observer", "Overlord"]},
    ),
    oidc_issuer.Client("svc-b", "secret-b", SCOPES, {"tenant": TENANT_B, "roles": ["Reviewer"]}),
    oidc_issuer.Client("svc-reader", "secret-r", "factory.feedback.read", {"tenant": TENANT_A}),
    oidc_issuer.Client("svc-eval", "secret-e", "factory.evaluation.read", {"tenant": TENANT_A}),
    # Admins by their claims: one of tenant A, one of a tenant the service never trusted the
    # issuer for (issue: "a token ... with another tenant ... registers an agent there").
    oidc_issuer.Client(
        "svc-admin", "secret-adm", SCOPES, {"tenant": TENANT_A, "roles": ["PlatformAdmin"]}
    ),
    oidc_issuer.Client(
        "svc-stranger", "secret-str", SCOPES,
        {"tenant": TENANT_ELSEWHERE, "roles": ["PlatformAdmin"]},
    ),
]  # fmt: skip
FEEDBACK = {"projectId": "p", "subjectKind": "run", "subjectRef": "run-1", "kind": "rating",
            "rating": 5}  # fmt: skip


def start(directory: Path) -> oidc_issuer.Issuer:
    return oidc_issuer.start_issuer(directory, audience=AUDIENCE, clients=CLIENTS)


def started_issuer(factory: pytest.TempPathFactory) -> Iterator[oidc_issuer.Issuer]:
    """A test module's issuer: ``yield from`` it in a module-scoped fixture."""
    started = start(factory.mktemp("issuer"))
    yield started
    started.stop()


def trusted(
    issuer: oidc_issuer.Issuer,
    tenants: tuple[str, ...] = TENANTS,
    roles: tuple[str, ...] = BOUND_ROLES,
) -> dict[str, Any]:
    """The development issuer's entry in ``FEEDBACKLOOP_OAUTH_ISSUERS``, its bound included."""
    return {"issuer": issuer.url, "audience": AUDIENCE, "tenants": tenants, "roles": roles}


def with_issuer(
    settings: Settings,
    issuer: oidc_issuer.Issuer,
    cooldown: float,
    *,
    also: tuple[oidc_issuer.Issuer, ...] = (),
    leeway: float = 30.0,
    tenants: tuple[str, ...] = TENANTS,
    roles: tuple[str, ...] = BOUND_ROLES,
) -> Settings:
    trusted_ones = [trusted(each, tenants, roles) for each in (issuer, *also)]
    return settings.model_copy(
        update={
            "oauth_issuers": Settings(oauth_issuers=json.dumps(trusted_ones)).oauth_issuers,
            "oauth_jwks_cooldown_seconds": cooldown,
            "oauth_leeway_seconds": leeway,
        }
    )


async def runtime_with(
    database_url: str,
    keys: Keys,
    issuer: oidc_issuer.Issuer,
    cooldown: float = 30.0,
    **more: Any,
) -> Runtime:
    settings = with_issuer(settings_for(database_url, keys), issuer, cooldown, **more)
    return await Runtime.open(settings)


async def record(runtime: Runtime, token: str) -> httpx.Response:
    async with client_for(runtime, token) as http:
        return await http.post("/factory/feedback", json=FEEDBACK)


async def read(runtime: Runtime, token: str, min_position: str) -> httpx.Response:
    async with client_for(runtime, token) as http:
        return await http.get("/factory/feedback", params={"minPosition": min_position})


def segment(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def claims(issuer: oidc_issuer.Issuer, **changes: Any) -> dict[str, Any]:
    now = int(time.time())
    given = {"iss": issuer.url, "aud": AUDIENCE, "sub": "svc-a", "tenant": TENANT_A,
             "scope": SCOPES, "iat": now, "exp": now + 300}  # fmt: skip
    return {**given, **changes}


def signed(issuer: oidc_issuer.Issuer, payload: dict[str, Any], key: dict[str, Any]) -> str:
    private = jwt.algorithms.RSAAlgorithm.from_jwk(json.dumps(key))
    return jwt.encode(payload, private, algorithm="RS256", headers={"kid": key["kid"]})


def by_the_issuers_key(issuer: oidc_issuer.Issuer, **changes: Any) -> str:
    return signed(issuer, claims(issuer, **changes), issuer.keys[0])


def alg_none(issuer: oidc_issuer.Issuer) -> str:
    header = {"alg": "none", "typ": "JWT", "kid": issuer.kid}
    return f"{segment(header)}.{segment(claims(issuer))}."


def hs256_with_the_public_key(issuer: oidc_issuer.Issuer) -> str:
    """The classic confusion: the issuer's public key (as its JWKS serves it, PEM) used as an
    HMAC secret. PyJWT refuses to make such a token, so it is made by hand."""
    public = jwt.algorithms.RSAAlgorithm.from_jwk(json.dumps(issuer.keys[0])).public_key()
    secret = jwt.algorithms.RSAAlgorithm(hashlib.sha256).prepare_key(public).public_bytes(*_pem())
    header = {"alg": "HS256", "typ": "JWT", "kid": issuer.kid}
    signing_input = f"{segment(header)}.{segment(claims(issuer))}"
    mac = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"


def _pem() -> tuple[Any, Any]:
    from cryptography.hazmat.primitives import serialization

    return serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo


ATTACKS = {
    "expired": lambda i: by_the_issuers_key(
        i, iat=int(time.time()) - 7200, exp=int(time.time()) - 3600
    ),
    "not-yet-valid": lambda i: by_the_issuers_key(i, nbf=int(time.time()) + 3600),
    "wrong-audience": lambda i: by_the_issuers_key(i, aud="urn:someone-else"),
    "wrong-issuer": lambda i: by_the_issuers_key(i, iss="http://127.0.0.1:9/not-trusted"),
    "alg-none": alg_none,
    "alg-not-allowed": hs256_with_the_public_key,
    "unknown-kid": lambda i: signed(
        i, claims(i), oidc_issuer.new_signing_key(f"kid-{uuid.uuid4().hex[:8]}")
    ),
    "bad-signature": lambda i: signed(
        i, claims(i), {**oidc_issuer.new_signing_key("x"), "kid": i.kid}
    ),
    "missing-tenant": lambda i: by_the_issuers_key(i, tenant=None),
    # Signed by the issuer, outside what it is trusted for (decisions D102).
    "tenant-not-allowed": lambda i: by_the_issuers_key(i, tenant=TENANT_ELSEWHERE),
    "role-not-allowed": lambda i: by_the_issuers_key(i, roles=["Reviewer", "PlatformAdmin"]),
}
