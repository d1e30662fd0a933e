"""Signing in to the console at a real OpenID Connect issuer: authorization code with PKCE,
the issuer's token as the session's bearer, checked as an API request's token is
(decisions D32–D34, D59)."""

import json
from collections.abc import Iterator

import pytest
from playwright.async_api import expect

from tests.browser.conftest import Console, People, Shots, accessible, file_report
from tests.oidc_tokens import AUDIENCE, oidc_issuer

SCOPE = "openid factory.feedback.read factory.feedback.write"


@pytest.fixture
def issuer(
    tmp_path_factory: pytest.TempPathFactory, console_port: int, people: People
) -> Iterator[oidc_issuer.Issuer]:
    callback = f"http://127.0.0.1:{console_port}/sign-in/oidc/callback"
    started = oidc_issuer.start_issuer(
        tmp_path_factory.mktemp("console-issuer"),
        audience=AUDIENCE,
        clients=[oidc_issuer.Client("console", "", SCOPE, redirect_uris=[callback])],
        accounts={"rhea": {"tenant": people.reviewer.tenant, "roles": ["Reviewer"]}},
    )
    yield started
    started.stop()


@pytest.fixture
def console_env(issuer: oidc_issuer.Issuer, people: People) -> dict[str, str]:
    # The issuer speaks for rhea's tenant and grants a Reviewer at most (decisions D102).
    bound = {"tenants": [people.reviewer.tenant], "roles": ["Reviewer"]}
    return {
        "FEEDBACKLOOP_OAUTH_ISSUERS": json.dumps(
            [{"issuer": issuer.url, "audience": AUDIENCE, **bound}]
        ),
        "FEEDBACKLOOP_CONSOLE_OIDC_ISSUER": issuer.url,
        "FEEDBACKLOOP_CONSOLE_OIDC_CLIENT_ID": "console",
    }


async def test_a_reviewer_signs_in_at_the_issuer_and_decides_as_herself(
    console: Console, people: People, shots: Shots, issuer: oidc_issuer.Issuer
) -> None:
    report_id = await file_report(console.url, people.requester, "Where is my certificate?")
    page = await console.page()
    await page.goto(f"/inbox/{report_id}")
    await expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    await accessible(page)
    await shots.take(page, "sign-in")

    await page.get_by_role("link", name=f"Sign in at {issuer.url}").click()
    await page.locator("input[name=login]").fill("rhea")
    await page.locator("input[name=password]").fill("any")
    await page.locator("button[type=submit]").click()

    await expect(page.get_by_role("heading", name="In the reporter's words")).to_be_visible()
    await expect(page.locator("header")).to_contain_text("rhea")
    await page.get_by_role("button", name="Triage").click()
    await expect(page.locator(".steps")).to_contain_text("rhea triaged")
    await shots.take(page, "triaged-as-rhea")
