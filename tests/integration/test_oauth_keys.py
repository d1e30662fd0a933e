"""An issuer's keys as the service keeps them (decisions D32), against real OpenID Connect
issuers (tests/oidc_tokens.py): a rotation while the service runs, the refetch cool-down,
several issuers, a real token's expiry, an issuer that is down."""

import asyncio
import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jwt
import pytest

from services.edge.token_claims import Refusal, TrustedIssuer
from services.edge.tokens import TokenVerifier
from services.processes.bootstrap import Runtime
from tests.conftest import Keys
from tests.oidc_tokens import (
    ATTACKS,
    AUDIENCE,
    BOUND_ROLES,
    CLIENTS,
    SCOPES,
    TENANT_A,
    TENANT_B,
    TENANTS,
    claims,
    oidc_issuer,
    record,
    runtime_with,
    signed,
    start,
    started_issuer,
)

# ------------------------------------------------------------------ key rotation


@pytest.fixture(scope="module")
def issuer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[oidc_issuer.Issuer]:
    yield from started_issuer(tmp_path_factory)


async def test_a_rotated_key_is_fetched_once_and_old_tokens_stay_valid(
    database_url: str, keys: Keys, tmp_path: Path
) -> None:
    rotating = start(tmp_path / "rotating")
    cooldown = 0.2
    rt = await runtime_with(database_url, keys, rotating, cooldown)
    try:
        verifier_fetches = rt_fetches(rt, rotating)
        old = rotating.token("svc-a", "secret-a", SCOPES)
        assert (await record(rt, old)).status_code == 201
        assert verifier_fetches() == 1

        new_kid = rotating.rotate()  # the issuer restarts: a new key signs, the old one stays
        new = rotating.token("svc-a", "secret-a", SCOPES)
        assert jwt.get_unverified_header(new)["kid"] == new_kid != "key-1"
        await asyncio.sleep(cooldown)  # the JWKS fetched at the first request may be refetched now
        for _ in range(3):
            assert (await record(rt, new)).status_code == 201
        assert verifier_fetches() == 2  # the unknown kid refetched the JWKS once
        assert (await record(rt, old)).status_code == 201  # still published, not expired
        assert verifier_fetches() == 2
    finally:
        await rt.close()
        rotating.stop()


async def test_unknown_kids_refetch_the_jwks_at_most_once_per_cooldown(
    database_url: str, keys: Keys, issuer: oidc_issuer.Issuer
) -> None:
    rt = await runtime_with(database_url, keys, issuer, cooldown=3600)
    try:
        fetches = rt_fetches(rt, issuer)
        assert (await record(rt, issuer.token("svc-a", "secret-a", SCOPES))).status_code == 201
        assert fetches() == 1
        for _ in range(5):
            assert (await record(rt, ATTACKS["unknown-kid"](issuer))).status_code == 401
        assert fetches() == 1
    finally:
        await rt.close()


def rt_fetches(rt: Runtime, issuer: oidc_issuer.Issuer) -> Any:
    """How often the runtime's token verifier has fetched the issuer's JWKS."""
    return lambda: rt.tokens.fetches(issuer.url)


# ------------------------------------------------------------------ several issuers, expiry, outage


async def test_several_issuers_are_trusted_and_none_can_sign_in_anothers_name(
    database_url: str, keys: Keys, issuer: oidc_issuer.Issuer, tmp_path: Path
) -> None:
    second = oidc_issuer.start_issuer(
        tmp_path / "second",
        audience=AUDIENCE,
        clients=[oidc_issuer.Client("svc-2", "secret-2", SCOPES, {"tenant": TENANT_B})],
    )
    rt = await runtime_with(database_url, keys, issuer, also=(second,))
    try:
        assert (await record(rt, issuer.token("svc-a", "secret-a", SCOPES))).status_code == 201
        assert (await record(rt, second.token("svc-2", "secret-2", SCOPES))).status_code == 201
        # The second issuer's key signing a token that names the first issuer (both call
        # their key "key-1"): the first issuer's key-1 does not verify it.
        forged = signed(second, claims(issuer), second.keys[0])
        assert (await record(rt, forged)).status_code == 401
    finally:
        await rt.close()
        second.stop()


async def test_a_real_token_is_accepted_until_it_expires(
    database_url: str, keys: Keys, tmp_path: Path
) -> None:
    short = oidc_issuer.start_issuer(
        tmp_path / "short", audience=AUDIENCE, clients=CLIENTS, ttl_seconds=2
    )
    rt = await runtime_with(database_url, keys, short, leeway=0.0)
    try:
        token = short.token("svc-a", "secret-a", SCOPES)
        assert (await record(rt, token)).status_code == 201
        expires = jwt.decode(token, options={"verify_signature": False})["exp"]
        await asyncio.sleep(max(0.0, expires - time.time()) + 1.0)  # past its exp, no leeway
        assert (await record(rt, token)).status_code == 401
    finally:
        await rt.close()
        short.stop()


async def test_an_unreachable_issuer_refuses_its_tokens_and_is_not_asked_again_at_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    down = f"http://127.0.0.1:{oidc_issuer._free_port()}"  # nothing listens there
    verifier = TokenVerifier(
        [TrustedIssuer(issuer=down, audience=AUDIENCE, tenants=TENANTS, roles=BOUND_ROLES)],
        jwks_cooldown_seconds=3600,
    )
    key = oidc_issuer.new_signing_key("key-1")
    token = jwt.encode(
        {"iss": down, "aud": AUDIENCE, "sub": "svc", "tenant": TENANT_A,
         "exp": int(time.time()) + 300},
        jwt.algorithms.RSAAlgorithm.from_jwk(json.dumps(key)),
        algorithm="RS256",
        headers={"kid": "key-1"},
    )  # fmt: skip
    with caplog.at_level(logging.INFO, logger="services.edge.tokens"):
        for _ in range(3):
            with pytest.raises(Refusal) as refused:
                verifier.principal(token)
            assert refused.value.reason == "keys-unavailable"
    assert verifier.failures(down) == 1
    assert any(r.levelno == logging.ERROR and down in r.getMessage() for r in caplog.records)
