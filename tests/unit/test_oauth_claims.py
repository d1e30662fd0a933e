"""How a verified token's claims become a principal (decisions D33), and how the trusted
issuers are configured (``FEEDBACKLOOP_OAUTH_ISSUERS``); the tokens themselves are tested
against a real issuer in tests/integration/test_oauth_tokens.py."""

import json
from typing import Any

import pytest
from pydantic import ValidationError

from contracts.roles import ROLES
from services.edge.auth import KeyRing
from services.edge.problems import Unauthorized
from services.edge.scopes import authorize
from services.edge.token_claims import Refusal, TrustedIssuer, principal_of, shown
from services.edge.tokens import TokenVerifier, looks_like_jwt
from services.processes.settings import Settings

TRUSTED = TrustedIssuer(
    issuer="https://idp.example.org/realms/x", audience="feedbackloop", tenants=("t1",),
    roles=ROLES,
)  # fmt: skip
BOUND = '"tenants": ["t1"], "roles": ["Reviewer"]'


def principal(claims: dict[str, Any], trusted: TrustedIssuer = TRUSTED) -> Any:
    return principal_of({"sub": "svc", "tenant": "t1", **claims}, trusted, {})


def test_known_scopes_of_scope_and_scp_are_kept_and_others_dropped() -> None:
    found = principal({"scope": "factory.feedback.read openid", "scp": ["factory.assets.write"]})
    assert found.scopes == {"factory.feedback.read", "factory.assets.write"}


def test_roles_come_from_the_configured_claim_even_nested() -> None:
    keycloak = TRUSTED.model_copy(update={"roles_claim": "realm_access.roles"})
    found = principal({"realm_access": {"roles": ["Operator", "offline_access"]}}, keycloak)
    assert found.roles == {"Operator"}
    assert principal({"roles": "Reviewer Observer"}).roles == {"Reviewer", "Observer"}


def test_a_token_of_its_own_client_is_a_service_and_a_persons_is_not() -> None:
    assert principal({"client_id": "svc"}).service
    assert principal({"azp": "svc"}).service
    assert not principal({"azp": "console", "sub": "alice"}).service
    assert not principal({}).service


@pytest.mark.parametrize(
    ("claims", "reason"),
    [({"tenant": None}, "missing-tenant"), ({"tenant": ""}, "missing-tenant"),
     ({"sub": 7}, "missing-sub")],
)  # fmt: skip
def test_a_token_without_a_tenant_or_a_subject_is_refused(
    claims: dict[str, Any], reason: str
) -> None:
    with pytest.raises(Refusal) as refused:
        principal(claims)
    assert refused.value.reason == reason


@pytest.mark.parametrize(
    ("claims", "reason"),
    [({"tenant": "t2", "roles": ["Reviewer"]}, "tenant-not-allowed"),
     ({"tenant": "t2", "roles": ["PlatformAdmin"]}, "tenant-not-allowed"),
     ({"roles": ["Reviewer", "PlatformAdmin"]}, "role-not-allowed"),
     # No roles claim: the roles its scopes imply (D26) are bounded alike.
     ({"scope": "factory.assets.write"}, "role-not-allowed")],
)  # fmt: skip
def test_a_token_outside_its_issuers_bound_is_refused_whole(
    claims: dict[str, Any], reason: str
) -> None:
    """Decisions D102: an issuer speaks for the tenants it is configured for and grants at
    most the roles it is configured with; a token beyond either is refused, never cut down."""
    bounded = TRUSTED.model_copy(update={"roles": ("Reviewer", "Observer", "Requester")})
    with pytest.raises(Refusal) as refused:
        principal(claims, bounded)
    assert refused.value.reason == reason
    within = principal({"roles": ["Reviewer"], "scope": "factory.feedback.read"}, bounded)
    assert (within.tenant_id, within.roles) == ("t1", {"Reviewer"})


def test_every_issuer_names_its_tenants_and_roles() -> None:
    """D102: an entry without its bound stops the process at start, naming the field."""
    with pytest.raises(ValidationError, match="tenants"):
        Settings(oauth_issuers='[{"issuer": "https://idp.example.org", "audience": "fl", '
                 '"roles": []}]')  # fmt: skip
    with pytest.raises(ValidationError, match="roles"):
        Settings(oauth_issuers='[{"issuer": "https://idp.example.org", "audience": "fl", '
                 '"tenants": ["t1"]}]')  # fmt: skip
    with pytest.raises(ValidationError, match="tenants"):
        Settings(oauth_issuers='[{"issuer": "https://idp.example.org", "audience": "fl", '
                 '"tenants": [], "roles": []}]')  # fmt: skip
    with pytest.raises(ValidationError, match="roles"):
        Settings(oauth_issuers='[{"issuer": "https://idp.example.org", "audience": "fl", '
                 '"tenants": ["t1"], "roles": ["Overlord"]}]')  # fmt: skip


def test_a_jwt_is_told_from_an_api_key_by_its_three_parts() -> None:
    assert looks_like_jwt("a.b.c")
    assert not looks_like_jwt("fl_abc-def")


def test_without_issuers_a_jwt_is_looked_up_as_a_key_and_so_refused() -> None:
    with pytest.raises(Unauthorized):
        authorize(KeyRing([]), "a.b.c", None, TokenVerifier([]))


def test_a_garbled_jwt_is_refused_as_malformed_without_asking_any_issuer() -> None:
    with pytest.raises(Refusal) as refused:
        TokenVerifier([TRUSTED]).principal("not.a.token")
    assert refused.value.reason == "malformed"


def test_issuers_are_read_from_json_and_a_bad_entry_names_its_field() -> None:
    given = (
        '[{"issuer": "https://idp.example.org", "audience": "fl", "roles_claim": "groups", '
        + BOUND
        + "}]"
    )
    issuers = Settings(oauth_issuers=given).oauth_issuers
    assert issuers[0].roles_claim == "groups"
    assert issuers[0].tenant_claim == "tenant"
    with pytest.raises(ValidationError, match="audience"):
        Settings(oauth_issuers='[{"issuer": "https://idp.example.org", ' + BOUND + "}]")
    with pytest.raises(ValidationError, match="issuer"):
        Settings(oauth_issuers='[{"issuer": "ftp://idp", "audience": "fl", ' + BOUND + "}]")


def test_issuers_are_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    bound = {"tenants": ["t1"], "roles": ["Reviewer"]}
    given = [
        {"issuer": "https://a.example.org", "audience": "fl", **bound},
        {"issuer": "https://b.example.org", "audience": "fl", "tenant_claim": "org.id", **bound},
    ]
    monkeypatch.setenv("FEEDBACKLOOP_OAUTH_ISSUERS", json.dumps(given))
    monkeypatch.setenv("FEEDBACKLOOP_OAUTH_JWKS_COOLDOWN_SECONDS", "5")
    settings = Settings()
    assert [i.issuer for i in settings.oauth_issuers] == [g["issuer"] for g in given]
    assert settings.oauth_issuers[1].tenant_claim == "org.id"
    assert settings.oauth_jwks_cooldown_seconds == 5
    assert settings.token_verifier()
    assert not Settings(oauth_issuers="[]").token_verifier()


def test_what_the_caller_wrote_is_logged_short_and_on_one_line() -> None:
    assert shown("svc-a") == "svc-a"
    assert shown("a\nWARNING forged") == "a\\nWARNING forged"
    assert len(shown("x" * 5000)) == 200
