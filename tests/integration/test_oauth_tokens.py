"""Bearer JWTs of a configured OAuth2 issuer on the HTTP routes (SPEC C52; decisions D33,
D34), against a real OpenID Connect issuer (tests/oidc_tokens.py): what a token it issued
grants, and each kind of bad token refused with 401 and its reason in the log."""

import json
import logging
from collections.abc import AsyncIterator, Iterator

import pytest

from contracts.roles import ROLES
from services.permissions.agent_register import registration as registration_of
from services.processes.bootstrap import Runtime
from services.processes.settings import Settings
from tests.conftest import Keys, client_for, event_count
from tests.oidc_tokens import (
    ATTACKS,
    FEEDBACK,
    SCOPES,
    TENANT_A,
    TENANT_ELSEWHERE,
    oidc_issuer,
    read,
    record,
    runtime_with,
    started_issuer,
    with_issuer,
)


@pytest.fixture(scope="module")
def issuer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[oidc_issuer.Issuer]:
    yield from started_issuer(tmp_path_factory)


@pytest.fixture
async def runtime(
    database_url: str, keys: Keys, issuer: oidc_issuer.Issuer
) -> AsyncIterator[Runtime]:
    rt = await runtime_with(database_url, keys, issuer)
    yield rt
    await rt.close()


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


async def test_an_issuers_token_acts_only_within_the_tenants_and_roles_it_is_trusted_for(
    database_url: str, keys: Keys, issuer: oidc_issuer.Issuer
) -> None:
    """Decisions D102: the issuer is trusted for tenants A and B. A token it issued naming
    another tenant, as a PlatformAdmin, registers nothing there (401, not one event more);
    an admin's token of tenant A is refused while the issuer may not grant PlatformAdmin,
    and registers once it may."""
    agent = "AgenticOffice/Agent/Stranger"
    registration = {"maintainers": ["mallory"]}
    stranger = issuer.token("svc-stranger", "secret-str", SCOPES)
    admin = issuer.token("svc-admin", "secret-adm", SCOPES)
    narrow = await runtime_with(database_url, keys, issuer)  # every role but PlatformAdmin
    try:
        for token in (stranger, admin):
            before = await event_count(narrow)
            async with client_for(narrow, token) as http:
                answer = await http.put(f"/factory/agents/{agent}", json=registration)
            assert answer.status_code == 401, answer.text
            assert await event_count(narrow) == before
    finally:
        await narrow.close()
    wide = await runtime_with(database_url, keys, issuer, roles=tuple(ROLES))
    try:
        before = await event_count(wide)
        async with client_for(wide, stranger) as http:
            answer = await http.put(f"/factory/agents/{agent}", json=registration)
        assert answer.status_code == 401, answer.text  # its tenant is still not the issuer's
        assert await event_count(wide) == before
        assert registration_of(wide.store, TENANT_ELSEWHERE, agent) is None
        async with client_for(wide, admin) as http:
            answer = await http.put(f"/factory/agents/{agent}", json=registration)
        assert answer.status_code == 200, answer.text
        found = registration_of(wide.store, TENANT_A, agent)
        assert found is not None
        assert found.maintainers == ["mallory"]
    finally:
        await wide.close()


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
