"""Trace links in a browser (decisions D265): a report filed with the trace of the answer it is
about links to the tenant's tracing UI from the Inbox, the report's page and My reports, by the
tenant's URL template, in a new tab that gets no referrer and no opener; a tenant with no
template sees the ids as text, never another tenant's template."""

import json

import pytest
from playwright.async_api import expect

from tests.browser.conftest import Console, People, Shots, accessible, file_report

pytestmark = pytest.mark.timeout(180)

TRACE, SPAN = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
TEMPLATE = "https://tracing.example/trace/{traceId}?span={spanId}"


@pytest.fixture
def console_env(people: People, request: pytest.FixtureRequest) -> dict[str, str]:
    """The template is tenant A's, or (``indirect`` "other") only tenant B's."""
    holder = people.other_tenant if getattr(request, "param", None) == "other" else people.reviewer
    return {"FEEDBACKLOOP_TRACE_LINKS": json.dumps({holder.tenant: TEMPLATE})}


async def test_a_report_s_trace_links_to_the_tenant_s_tracing_ui(
    console: Console, people: People, shots: Shots
) -> None:
    report = await file_report(
        console.url, people.requester, "Why this answer?", traceId=TRACE, spanId=SPAN
    )
    untraced = await file_report(console.url, people.requester, "An answer without a trace")
    expected = f"https://tracing.example/trace/{TRACE}?span={SPAN}"

    rita = await console.signed_in(people.reviewer)
    await rita.goto("/inbox")
    row = rita.get_by_role("row").filter(has_text="Why this answer?")
    link = row.get_by_role("link", name=f"trace {TRACE[:8]}")
    await expect(link).to_have_attribute("href", expected)
    await expect(link).to_have_attribute("target", "_blank")
    await expect(link).to_have_attribute("rel", "noopener noreferrer")
    other = rita.get_by_role("row").filter(has_text="An answer without a trace")
    await expect(other.locator("a.trace")).to_have_count(0)
    await shots.take(rita, "inbox-trace-link")
    await accessible(rita)

    await rita.goto(f"/inbox/{report}")
    await expect(rita.locator("main a.trace")).to_have_attribute("href", expected)
    await shots.take(rita, "report-trace-link")
    await accessible(rita)
    await rita.goto(f"/inbox/{untraced}")
    await expect(rita.locator("main .trace")).to_have_count(0)

    rob = await console.signed_in(people.requester)
    await rob.goto("/my-reports")
    await expect(rob.locator("main a.trace")).to_have_attribute("href", expected)


@pytest.mark.parametrize("console_env", ["other"], indirect=True)
async def test_a_tenant_without_a_template_sees_the_ids_not_another_s_links(
    console: Console, people: People, shots: Shots
) -> None:
    report = await file_report(console.url, people.requester, "A traced answer", traceId=TRACE)
    rita = await console.signed_in(people.reviewer)
    await rita.goto(f"/inbox/{report}")
    await expect(rita.locator("main .trace")).to_contain_text(TRACE)
    await expect(rita.locator("main a.trace")).to_have_count(0)
    await expect(rita.locator("main")).not_to_contain_text("tracing.example")
    await shots.take(rita, "ids-without-template")
    await accessible(rita)
