"""The widget's routes against real PostgreSQL (decisions D230–D239): a Requester's key mints a
token for one project, one agent and one origin; the token records a rating, a comment and a
wrong-answer report there and nowhere else; refusals record nothing; the audit has a row of
each decision."""

import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from services.edge.auth import SCOPES, WidgetBound, hash_key, new_key
from services.edge.widget_tokens import WidgetTokens, claims_of
from services.processes.bootstrap import Runtime
from services.processes.settings import Settings
from tests.conftest import client_for, event_count
from tests.integration.test_role_rules import refusals_of

ORIGIN = "https://shop.example"
AGENT = "Shop/Agent/Assistant"
TOKENS, FEEDBACK = "/factory/widget/tokens", "/factory/widget/feedback"
MINT = {"projectId": "shop", "agent": AGENT, "origin": ORIGIN, "minutes": 5}


@dataclass(frozen=True)
class ShopKeys:
    tenant: str
    backend: str  # the embedding site's backend: a Requester
    admin: str
    reviewer: str
    observer: str
    admin_b: str  # tenant B's admin
    backend_b: str  # tenant B's Requester
    entries: str


@pytest.fixture
def shop() -> ShopKeys:
    a, b = f"shop-a-{uuid.uuid4().hex[:6]}", f"shop-b-{uuid.uuid4().hex[:6]}"
    entries: list[dict[str, Any]] = []

    def made(tenant: str, subject: str, role: str) -> str:
        key, entry = new_key(tenant, subject, list(SCOPES), roles=[role])
        entries.append(entry)
        return key

    return ShopKeys(
        a,
        made(a, "shop-backend", "Requester"),
        made(a, "ada", "PlatformAdmin"),
        made(a, "rita", "Reviewer"),
        made(a, "olga", "Observer"),
        made(b, "admin-b", "PlatformAdmin"),
        made(b, "backend-b", "Requester"),
        json.dumps(entries),
    )


@pytest.fixture
async def runtime(database_url: str, shop: ShopKeys) -> AsyncIterator[Runtime]:
    settings = Settings(
        database_url=database_url,
        api_keys=shop.entries,
        topic_prefix=f"t{uuid.uuid4().hex[:8]}.",
        read_wait_seconds=20,
        widget_origins={shop.tenant: [ORIGIN]},
    )
    rt = await Runtime.open(settings)
    await rt.start_key_refresher()
    rt.start_projections()
    yield rt
    await rt.close()


@pytest.fixture
async def api(runtime: Runtime, shop: ShopKeys) -> AsyncIterator[httpx.AsyncClient]:
    """The API in-process; each call names its own key."""
    async with client_for(runtime, shop.admin) as http:
        await register(http, shop.admin, AGENT)
        yield http


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def register(http: httpx.AsyncClient, admin: str, agent: str) -> None:
    put = await http.put(
        f"/factory/agents/{agent}", json={"maintainers": ["mia"]}, headers=auth(admin)
    )
    assert put.status_code in (200, 201), put.text


async def minted(http: httpx.AsyncClient, key: str, **body: Any) -> str:
    answer = await http.post(TOKENS, json={**MINT, **body}, headers=auth(key))
    assert answer.status_code == 201, answer.text
    token: str = answer.json()["token"]
    return token


async def audit_rows(runtime: Runtime, actor: str) -> list[tuple[str, str, str | None]]:
    await runtime.bus.flush_audit()
    rows = await runtime.pool.fetch(
        "SELECT command, result, door FROM audit_trail WHERE actor = $1 ORDER BY id", actor
    )
    return [(r["command"], r["result"], r["door"]) for r in rows]


async def test_a_token_records_a_rating_under_its_project_and_the_mint_is_audited(
    runtime: Runtime, api: httpx.AsyncClient, shop: ShopKeys
) -> None:
    answer = await api.post(TOKENS, json=MINT, headers=auth(shop.backend))
    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert (body["projectId"], body["agent"], body["origin"]) == ("shop", AGENT, ORIGIN)
    expires = datetime.fromisoformat(body["expiresAt"])
    assert timedelta(minutes=4) < expires - datetime.now(UTC) <= timedelta(minutes=5)
    assert ("MintWidgetToken", "applied", "http") in await audit_rows(runtime, "shop-backend")

    posted = await api.post(
        FEEDBACK,
        json={"subjectRef": "run-7", "rating": 4},
        headers={**auth(body["token"]), "Origin": ORIGIN},
    )
    assert posted.status_code == 201, posted.text
    listed = await api.get(
        "/factory/feedback",
        params={"subjectRef": "run-7", "minPosition": posted.json()["position"]},
        headers=auth(shop.reviewer),
    )
    (item,) = listed.json()["items"]
    assert (item["projectId"], item["rating"], item["givenBy"]) == ("shop", 4, "shop-backend")


async def test_a_comment_and_a_wrong_answer_report_name_the_token_s_agent(
    api: httpx.AsyncClient, shop: ShopKeys
) -> None:
    token = await minted(api, shop.backend)
    wrong = {"thread": "thread-9", "messageRef": "message-3", "modelName": "model-x"}
    posted = await api.post(
        FEEDBACK,
        json={"subjectRef": "run-8", "rating": 1, "comment": "It named the wrong price.",
              "wrongAnswer": wrong},
        headers=auth(token),
    )  # fmt: skip
    assert posted.status_code == 201, posted.text
    body = posted.json()
    assert body["commentFeedbackId"]
    assert body["reportId"]
    report = await api.get(
        f"/factory/reports/{body['reportId']}",
        params={"minPosition": body["position"]},
        headers=auth(shop.reviewer),
    )
    assert report.status_code == 200, report.text
    shown = report.json()
    assert shown["message"] == "It named the wrong price."
    assert f"Agent: {AGENT}" in shown["extraContext"]
    assert shown["status"] == "New"  # submitted, kept in the Inbox


@pytest.mark.parametrize("who", ["reviewer", "observer", "admin"])
async def test_only_a_requester_s_key_mints_and_a_refusal_is_audited(
    who: str, runtime: Runtime, api: httpx.AsyncClient, shop: ShopKeys
) -> None:
    before = await event_count(runtime)
    answer = await api.post(TOKENS, json=MINT, headers=auth(getattr(shop, who)))
    assert answer.status_code == 403, answer.text
    assert (answer.json()["error"], answer.json()["field"]) == ("not-permitted", "role")
    assert await event_count(runtime) == before
    actor = {"reviewer": "rita", "observer": "olga", "admin": "ada"}[who]
    refused = await refusals_of(runtime, actor)
    assert refused[-1] == ("POST /factory/widget/tokens", "not-permitted", "http")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"projectId": None}, "projectId"),
        ({"minutes": 16}, "minutes"),
        ({"minutes": 0}, "minutes"),
        ({"minutes": "5"}, "minutes"),
        ({"origin": "https://elsewhere.example"}, "origin"),
        ({"origin": "javascript:alert(1)"}, "origin"),
        ({"tenantId": "other"}, "tenantId"),
        ({"roles": ["Reviewer"]}, "roles"),
    ],
)
async def test_a_bad_mint_body_is_422_naming_the_field(
    body: dict[str, Any], field: str, api: httpx.AsyncClient, shop: ShopKeys
) -> None:
    sent = {key: value for key, value in {**MINT, **body}.items() if value is not None}
    answer = await api.post(TOKENS, json=sent, headers=auth(shop.backend))
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == field


async def test_another_tenant_s_agent_is_refused_as_absent_and_audited(
    runtime: Runtime, api: httpx.AsyncClient, shop: ShopKeys
) -> None:
    await register(api, shop.admin_b, "Other/Agent/Theirs")
    answer = await api.post(
        TOKENS, json={**MINT, "agent": "Other/Agent/Theirs"}, headers=auth(shop.backend)
    )
    assert answer.status_code == 404, answer.text
    assert answer.json()["field"] == "agent"
    assert (await refusals_of(runtime, "shop-backend"))[-1][1] == "not-found"
    # Tenant B's backend is refused its own origin list too: none is configured for B.
    theirs = await api.post(
        TOKENS, json={**MINT, "agent": "Other/Agent/Theirs"}, headers=auth(shop.backend_b)
    )
    assert (theirs.status_code, theirs.json()["field"]) == (422, "origin")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"rating": 6}, "rating"),
        ({"rating": "5"}, "rating"),
        ({"subjectRef": ""}, "subjectRef"),
        ({"comment": "   "}, "comment"),
        ({"wrongAnswer": {"thread": "t", "messageRef": "m", "modelName": "x"}}, "comment"),
        ({"projectId": "another"}, "projectId"),
        ({"givenBy": "someone"}, "givenBy"),
        ({"agent": "Other/Agent"}, "agent"),
    ],
)
async def test_a_bad_widget_body_is_422_naming_the_field_and_records_nothing(
    body: dict[str, Any], field: str, runtime: Runtime, api: httpx.AsyncClient, shop: ShopKeys
) -> None:
    token = await minted(api, shop.backend)
    before = await event_count(runtime)
    answer = await api.post(
        FEEDBACK, json={"subjectRef": "run-1", "rating": 3, **body}, headers=auth(token)
    )
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == field
    assert await event_count(runtime) == before


async def test_an_expired_token_is_401_and_records_nothing(
    runtime: Runtime, api: httpx.AsyncClient, shop: ShopKeys
) -> None:
    signed = runtime.keys.signed
    assert isinstance(signed, WidgetTokens)
    minter = runtime.keys.identify(shop.backend)
    assert minter is not None
    then = datetime.now(UTC) - timedelta(minutes=16)
    bound = WidgetBound("shop", AGENT, ORIGIN)
    expired = signed.mint(claims_of(minter, hash_key(shop.backend), bound, 15, then))
    before = await event_count(runtime)
    answer = await api.post(FEEDBACK, json={"subjectRef": "r", "rating": 5}, headers=auth(expired))
    assert answer.status_code == 401, answer.text
    assert answer.json()["error"] == "unauthorized"
    assert await event_count(runtime) == before


async def test_a_token_passes_no_other_route_and_a_key_not_the_widget_s(
    runtime: Runtime, api: httpx.AsyncClient, shop: ShopKeys
) -> None:
    token = await minted(api, shop.backend)
    before = await event_count(runtime)
    rating = {"projectId": "x", "subjectKind": "run", "subjectRef": "r", "kind": "rating",
              "rating": 5}  # fmt: skip
    for method, path, body in [
        ("POST", "/factory/feedback", rating),
        ("GET", "/factory/feedback", None),
        ("GET", "/factory/reports/mine", None),
        ("POST", TOKENS, MINT),  # a token mints no token
        ("POST", "/factory/reports", {"category": "bug", "message": "m"}),
    ]:
        answer = await api.request(method, path, json=body, headers=auth(token))
        assert answer.status_code == 403, (path, answer.text)
    # The key itself is not the widget's: its post takes the token alone.
    keyed = await api.post(FEEDBACK, json={"subjectRef": "r", "rating": 5},
                           headers=auth(shop.backend))  # fmt: skip
    assert keyed.status_code == 403, keyed.text
    assert keyed.json()["field"] == "Authorization"
    assert await event_count(runtime) == before


async def test_a_token_posted_from_another_page_is_refused(
    runtime: Runtime, api: httpx.AsyncClient, shop: ShopKeys
) -> None:
    token = await minted(api, shop.backend)
    before = await event_count(runtime)
    answer = await api.post(
        FEEDBACK,
        json={"subjectRef": "r", "rating": 5},
        headers={**auth(token), "Origin": "https://evil.example"},
    )
    assert answer.status_code == 403, answer.text
    assert answer.json()["field"] == "Origin"
    assert await event_count(runtime) == before


async def test_a_revoked_key_takes_its_tokens_along(
    runtime: Runtime, api: httpx.AsyncClient, shop: ShopKeys
) -> None:
    """D233: the minting key is asked at each use; revoked, its tokens are refused (401)."""
    issued = await api.post(
        "/factory/keys",
        json={"subject": "kiosk", "scopes": ["factory.feedback.write"]},
        headers=auth(shop.admin),
    )
    assert issued.status_code == 201, issued.text
    granted = await api.post(
        "/factory/roles/grant", json={"subject": "kiosk", "role": "Requester"},
        headers=auth(shop.admin),
    )  # fmt: skip
    assert granted.status_code == 200, granted.text
    token = await minted(api, issued.json()["key"])
    first = await api.post(FEEDBACK, json={"subjectRef": "r1", "rating": 5}, headers=auth(token))
    assert first.status_code == 201, first.text
    revoked = await api.post(
        f"/factory/keys/{issued.json()['keyId']}/revoke", headers=auth(shop.admin)
    )
    assert revoked.status_code == 200, revoked.text
    again = await api.post(FEEDBACK, json={"subjectRef": "r2", "rating": 5}, headers=auth(token))
    assert again.status_code == 401, again.text


async def test_cors_answers_the_configured_origin_on_the_widget_s_route_alone(
    api: httpx.AsyncClient,
) -> None:
    ask = {
        "Origin": ORIGIN,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type, idempotency-key",
    }
    preflight = await api.options(FEEDBACK, headers=ask)
    assert preflight.status_code == 200, preflight.text
    assert preflight.headers["access-control-allow-origin"] == ORIGIN
    assert "POST" in preflight.headers["access-control-allow-methods"]
    assert "idempotency-key" in preflight.headers["access-control-allow-headers"].lower()
    stranger = await api.options(FEEDBACK, headers={**ask, "Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in stranger.headers
    elsewhere = await api.options("/factory/feedback", headers=ask)
    assert "access-control-allow-origin" not in elsewhere.headers
    # An error answer of the widget's route is readable by the page (the widget shows a 401).
    refused = await api.post(
        FEEDBACK, json={}, headers={"Origin": ORIGIN, "Authorization": "Bearer fl_none"}
    )
    assert refused.status_code == 401
    assert refused.headers["access-control-allow-origin"] == ORIGIN


async def test_the_module_is_served_as_javascript_cached_and_to_any_page(
    api: httpx.AsyncClient,
) -> None:
    answer = await api.get("/widget/feedback.js")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "text/javascript; charset=utf-8"
    assert answer.headers["access-control-allow-origin"] == "*"
    assert answer.headers["cache-control"] == "public, max-age=300"
    assert "export function mount" in answer.text
    again = await api.get("/widget/feedback.js", headers={"If-None-Match": answer.headers["etag"]})
    assert again.status_code == 304
