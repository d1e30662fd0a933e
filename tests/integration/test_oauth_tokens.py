"""Bearer JWTs of a configured OAuth2 issuer (SPEC C52; decisions D32–D34), against a real
OpenID Connect issuer started here (ops/oidc_issuer.py: node-oidc-provider) that issues real
client-credentials tokens. The success paths use only tokens it issued; the attacks are
tokens made here (alg none, HS256 keyed with the public key, an unknown kid, and the issuer's
own key signing an expired, not-yet-valid, wrongly addressed or foreign token)."""

import asyncio
import base64
import hashlib
import hmac
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import jwt
import oidc_issuer
import pytest
from grpc import StatusCode
from typer.testing import CliRunner

from contracts.learning_pb2 import GetDatasetSnapshotRequest
from contracts.learning_pb2_grpc import LearningStub
from services.edge.tokens import Refusal, TokenVerifier, TrustedIssuer
from services.processes import cli
from services.processes.bootstrap import Runtime
from services.processes.settings import Settings
from tests import servers  # noqa: F401  (puts ops/ on sys.path; conftest imported it first)
from tests.conftest import Keys, client_for, event_count, settings_for

AUDIENCE = "urn:feedbackloop"
TENANT_A, TENANT_B = f"oauth-a-{uuid.uuid4().hex[:6]}", f"oauth-b-{uuid.uuid4().hex[:6]}"
SCOPES = "factory.feedback.write factory.feedback.read"
CLIENTS = [
    oidc_issuer.Client(
        "svc-a", "secret-a", SCOPES,
        {"tenant": TENANT_A, "roles": ["Reviewer", "Observer", "Overlord"]},
    ),
    oidc_issuer.Client("svc-b", "secret-b", SCOPES, {"tenant": TENANT_B, "roles": ["Reviewer"]}),
    oidc_issuer.Client("svc-reader", "secret-r", "factory.feedback.read", {"tenant": TENANT_A}),
    oidc_issuer.Client("svc-eval", "secret-e", "factory.evaluation.read", {"tenant": TENANT_A}),
]  # fmt: skip
FEEDBACK = {"projectId": "p", "subjectKind": "run", "subjectRef": "run-1", "kind": "rating",
            "rating": 5}  # fmt: skip


def start(directory: Path) -> oidc_issuer.Issuer:
    return oidc_issuer.start_issuer(directory, audience=AUDIENCE, clients=CLIENTS)


@pytest.fixture(scope="module")
def issuer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[oidc_issuer.Issuer]:
    started = start(tmp_path_factory.mktemp("issuer"))
    yield started
    started.stop()


def with_issuer(
    settings: Settings,
    issuer: oidc_issuer.Issuer,
    cooldown: float,
    *,
    also: tuple[oidc_issuer.Issuer, ...] = (),
    leeway: float = 30.0,
) -> Settings:
    trusted = [{"issuer": each.url, "audience": AUDIENCE} for each in (issuer, *also)]
    return settings.model_copy(
        update={
            "oauth_issuers": Settings(oauth_issuers=json.dumps(trusted)).oauth_issuers,
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


@pytest.fixture
async def runtime(
    database_url: str, keys: Keys, issuer: oidc_issuer.Issuer
) -> AsyncIterator[Runtime]:
    rt = await runtime_with(database_url, keys, issuer)
    yield rt
    await rt.close()


async def record(runtime: Runtime, token: str) -> httpx.Response:
    async with client_for(runtime, token) as http:
        return await http.post("/factory/feedback", json=FEEDBACK)


async def read(runtime: Runtime, token: str, min_position: str) -> httpx.Response:
    async with client_for(runtime, token) as http:
        return await http.get("/factory/feedback", params={"minPosition": min_position})


# ------------------------------------------------------------------ tokens the issuer issued


async def test_a_client_credentials_token_records_and_reads_within_its_tenant(
    runtime: Runtime, issuer: oidc_issuer.Issuer, keys: Keys
) -> None:
    runtime.start_projections()
    token = issuer.token("svc-a", "secret-a", SCOPES)
    written = await record(runtime, token)
    assert written.status_code == 201, written.text
    position = written.json()["position"]

    answer = await read(
        runtime, issuer.token("svc-reader", "secret-r", "factory.feedback.read"), position
    )
    assert answer.status_code == 200, answer.text
    assert [item["subjectRef"] for item in answer.json()["items"]] == ["run-1"]

    # Another tenant's token (same issuer, its own tenant claim) sees nothing of it; the static
    # keys keep working beside the tokens.
    async with client_for(runtime, issuer.token("svc-b", "secret-b", SCOPES)) as http:
        assert (await http.get("/factory/feedback")).json()["items"] == []
    async with client_for(runtime, keys.a) as http:
        assert (await http.post("/factory/feedback", json=FEEDBACK)).status_code == 201


async def test_sub_is_the_actor_and_the_claims_give_tenant_scopes_and_roles(
    issuer: oidc_issuer.Issuer,
) -> None:
    settings = with_issuer(Settings(), issuer, 30.0)
    principal = settings.token_verifier().principal(issuer.token("svc-a", "secret-a", SCOPES))
    assert principal.subject == "svc-a"
    assert principal.tenant_id == TENANT_A
    assert principal.scopes == frozenset(SCOPES.split())
    assert principal.roles == {"Reviewer", "Observer"}  # a role we do not know is dropped
    assert principal.service  # its own client: a client-credentials token (decisions D33)


async def test_a_token_without_the_scope_is_forbidden_and_records_nothing(
    runtime: Runtime, issuer: oidc_issuer.Issuer
) -> None:
    before = await event_count(runtime)
    answer = await record(runtime, issuer.token("svc-reader", "secret-r", "factory.feedback.read"))
    assert answer.status_code == 403
    assert answer.json()["scope"] == "factory.feedback.write"
    assert await event_count(runtime) == before


# ------------------------------------------------------------------ tokens refused


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
}


@pytest.mark.parametrize("reason", sorted(ATTACKS))
async def test_a_bad_token_is_refused_with_401_and_its_reason_in_the_log(
    runtime: Runtime,
    issuer: oidc_issuer.Issuer,
    reason: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    token = ATTACKS[reason](issuer)
    before = await event_count(runtime)
    with caplog.at_level(logging.INFO, logger="services.edge.tokens"):
        answer = await record(runtime, token)
    assert answer.status_code == 401, answer.text
    assert answer.json()["error"] == "unauthorized"
    assert answer.headers["WWW-Authenticate"] == "Bearer"
    assert await event_count(runtime) == before
    refusals = [r for r in caplog.records if r.getMessage().startswith("bearer token refused")]
    assert [getattr(r, "reason", None) for r in refusals] == [reason]
    logged = "\n".join(r.getMessage() + json.dumps(vars(r), default=str) for r in caplog.records)
    signature = token.rsplit(".", 1)[1]
    assert token not in logged
    assert not signature or signature not in logged


# ------------------------------------------------------------------ key rotation


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
        [TrustedIssuer(issuer=down, audience=AUDIENCE)], jwks_cooldown_seconds=3600
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


async def test_the_grpc_door_takes_the_same_tokens(
    runtime: Runtime, issuer: oidc_issuer.Issuer
) -> None:
    port = await runtime.start_grpc(oidc_issuer._free_port())
    assert port is not None
    request = GetDatasetSnapshotRequest(dataset_id="agent:Office/Coach", version=1)
    cases = [
        # Known and holding the scope: it gets as far as the (absent) dataset of its tenant.
        (issuer.token("svc-eval", "secret-e", "factory.evaluation.read"), StatusCode.NOT_FOUND),
        (issuer.token("svc-reader", "secret-r", "factory.feedback.read"),
         StatusCode.PERMISSION_DENIED),
        (ATTACKS["expired"](issuer), StatusCode.UNAUTHENTICATED),
    ]  # fmt: skip
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        learning = LearningStub(channel)
        for token, status in cases:
            metadata = (("authorization", f"Bearer {token}"),)
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await learning.GetDatasetSnapshot(request, metadata=metadata)
            assert refused.value.code() == status


# ------------------------------------------------------------------ the operator's commands


def run_cli(issuer: oidc_issuer.Issuer, args: list[str], given: str = "") -> Any:
    trusted = json.dumps([{"issuer": issuer.url, "audience": AUDIENCE}])
    env = {"FEEDBACKLOOP_OAUTH_ISSUERS": trusted}
    return CliRunner().invoke(cli.app, ["tokens", *args], input=given, env=env)


def test_tokens_issuers_lists_the_keys_each_issuer_publishes(issuer: oidc_issuer.Issuer) -> None:
    listed = run_cli(issuer, ["issuers"])
    assert listed.exit_code == 0, listed.output
    assert f"{issuer.url}: audience {AUDIENCE}, keys {issuer.kid}" in listed.output


def test_tokens_check_shows_the_principal_or_the_reason(issuer: oidc_issuer.Issuer) -> None:
    accepted = run_cli(issuer, ["check"], issuer.token("svc-a", "secret-a", SCOPES))
    assert accepted.exit_code == 0, accepted.output
    shown = json.loads(accepted.stdout)
    assert (shown["tenant"], shown["subject"], shown["service"]) == (TENANT_A, "svc-a", True)
    assert shown["roles"] == ["Observer", "Reviewer"]
    refused = run_cli(issuer, ["check"], ATTACKS["expired"](issuer))
    assert refused.exit_code == 1
    assert "refused: expired" in refused.stderr
