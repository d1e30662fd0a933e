"""The widget token's rules (decisions D230–D233): what a token says, how long it lives, whom
it acts as and where it passes. Pure: the clock and the keys are given."""

import json
from datetime import UTC, datetime, timedelta

import jwt
import pytest
from pydantic import ValidationError

from contracts.widget import MintWidgetToken, WidgetFeedback
from services.edge.auth import ApiKeyEntry, KeyRing, Principal, WidgetBound, hash_key, new_key
from services.edge.problems import Forbidden, Unauthorized
from services.edge.scopes import authorize
from services.edge.token_claims import Refusal
from services.edge.widget_tokens import ROLE, WidgetTokens, claims_of, widget_key

NOW = datetime(2026, 12, 5, 19, 0, tzinfo=UTC)
BOUND = WidgetBound("shop", "Shop/Agent/Assistant", "https://shop.example")
SIGNING = widget_key(b"\x01" * 32)


def ring_with(roles: list[str] | None) -> tuple[KeyRing, str]:
    key, entry = new_key("acme", "shop-backend", ["factory.feedback.write"], roles=roles)
    ring = KeyRing([ApiKeyEntry.model_validate(entry)])
    ring.signed = WidgetTokens(SIGNING)
    return ring, key


def minted(ring: KeyRing, key: str, minutes: int = 10, now: datetime = NOW) -> str:
    minter = ring.identify(key)
    assert minter is not None
    signed = ring.signed
    assert isinstance(signed, WidgetTokens)
    return signed.mint(claims_of(minter, hash_key(key), BOUND, minutes, now))


def principal_now(ring: KeyRing, token: str) -> Principal:
    signed = ring.signed
    assert isinstance(signed, WidgetTokens)
    return signed.principal(token, ring)


def test_a_token_names_the_key_s_tenant_and_subject_its_project_agent_and_origin() -> None:
    ring, key = ring_with(["Requester"])
    minter = ring.identify(key)
    assert minter is not None
    claims = claims_of(minter, hash_key(key), BOUND, 10, NOW)
    assert (claims["tenant"], claims["sub"]) == ("acme", "shop-backend")
    assert (claims["project"], claims["agent"], claims["origin"]) == (
        "shop",
        "Shop/Agent/Assistant",
        "https://shop.example",
    )
    assert claims["exp"] == int((NOW + timedelta(minutes=10)).timestamp())
    assert claims["key"] == hash_key(key)


@pytest.mark.parametrize("minutes", [0, 16, 60])
def test_a_token_lives_one_to_fifteen_minutes(minutes: int) -> None:
    ring, key = ring_with(["Requester"])
    minter = ring.identify(key)
    assert minter is not None
    with pytest.raises(ValueError, match="1 to 15 minutes"):
        claims_of(minter, hash_key(key), BOUND, minutes, NOW)
    with pytest.raises(ValidationError, match="minutes"):
        MintWidgetToken.model_validate(
            {"projectId": "p", "agent": "a", "origin": "https://x.example", "minutes": minutes}
        )


def test_a_valid_token_acts_as_a_requester_holding_no_scope_bound_to_its_agent() -> None:
    ring, key = ring_with(["Requester", "Reviewer"])
    token = minted(ring, key, now=datetime.now(UTC))
    principal = principal_now(ring, token)
    assert (principal.tenant_id, principal.subject) == ("acme", "shop-backend")
    assert principal.roles == frozenset({ROLE})  # never the key's Reviewer
    assert principal.scopes == frozenset()
    assert principal.widget == BOUND


def test_an_expired_token_is_refused() -> None:
    ring, key = ring_with(["Requester"])
    token = minted(ring, key, minutes=1, now=datetime.now(UTC) - timedelta(minutes=2))
    with pytest.raises(Refusal, match="expired"):
        principal_now(ring, token)
    with pytest.raises(Unauthorized):
        authorize(ring, token, None, widget=True)


def test_a_token_of_a_key_the_ring_no_longer_holds_or_that_is_no_requester_is_refused() -> None:
    ring, key = ring_with(["Requester"])
    token = minted(ring, key, now=datetime.now(UTC))
    other, _ = ring_with(["Requester"])  # the key revoked: a ring without it
    with pytest.raises(Refusal, match="minter-gone"):
        principal_now(other, token)
    demoted = KeyRing([ApiKeyEntry.model_validate({**entry_of(key), "roles": ["Observer"]})])
    demoted.signed = ring.signed
    with pytest.raises(Refusal, match="minter-gone"):
        principal_now(demoted, token)


def entry_of(key: str) -> dict[str, object]:
    return {"sha256": hash_key(key), "tenant": "acme", "subject": "shop-backend",
            "scopes": ["factory.feedback.write"]}  # fmt: skip


def test_a_token_signed_with_another_key_or_living_longer_than_the_bound_is_refused() -> None:
    ring, key = ring_with(["Requester"])
    minter = ring.identify(key)
    assert minter is not None
    claims = claims_of(minter, hash_key(key), BOUND, 10, datetime.now(UTC))
    forged = WidgetTokens(widget_key(b"\x02" * 32)).mint(claims)
    with pytest.raises(Refusal, match="invalid"):
        principal_now(ring, forged)
    signed = ring.signed
    assert isinstance(signed, WidgetTokens)
    too_long = signed.mint({**claims, "exp": int(claims["exp"]) + 3600})  # type: ignore[call-overload]
    with pytest.raises(Refusal, match="too-long"):
        principal_now(ring, too_long)


def test_every_replica_derives_the_same_signing_key_from_the_database_s_key() -> None:
    assert widget_key(b"\x01" * 32) == SIGNING
    assert widget_key(b"\x02" * 32) != SIGNING
    assert widget_key(b"\x01" * 32) != b"\x01" * 32


def test_a_widget_token_passes_the_widget_s_routes_only() -> None:
    """D233: every other route's ``authorize`` refuses it (403), whatever it requires."""
    ring, key = ring_with(["Requester"])
    token = minted(ring, key, now=datetime.now(UTC))
    assert authorize(ring, token, None, widget=True).widget == BOUND
    for required in (None, "factory.feedback.write", "factory.feedback.read"):
        with pytest.raises(Forbidden):
            authorize(ring, token, required)
    # The key itself still authenticates everywhere it did.
    assert authorize(ring, key, "factory.feedback.write").widget is None


def test_only_a_widget_token_is_owned_by_the_widget_s_verifier() -> None:
    ring, key = ring_with(["Requester"])
    signed = WidgetTokens(SIGNING)
    assert signed.owns(minted(ring, key))
    assert not signed.owns(key)
    oauth = jwt.encode({"sub": "x"}, "s" * 32, algorithm="HS256", headers={"typ": "JWT"})
    assert not signed.owns(oauth)
    assert not signed.owns("a.b.c")


def test_the_widget_s_body_is_strict() -> None:
    with pytest.raises(ValidationError, match="rating"):
        WidgetFeedback.model_validate({"subjectRef": "run-1", "rating": 6})
    with pytest.raises(ValidationError, match="givenBy"):
        WidgetFeedback.model_validate({"subjectRef": "run-1", "rating": 5, "givenBy": "x"})
    with pytest.raises(ValidationError, match="origin"):
        MintWidgetToken.model_validate(
            {"projectId": "p", "agent": "a", "origin": "https://x.example/path"}
        )
    assert json.loads(WidgetFeedback.model_validate(
        {"subjectRef": "run-1", "rating": 5}).model_dump_json(by_alias=True)
    )["subjectKind"] == "run"  # fmt: skip
