"""The triage intake's pure parts: the item's events, the issue's coordinates, which tracker
answers are worth waiting for, and the settings' token kept out of sight (SPEC W129–W133;
decisions D64–D66)."""

from datetime import UTC, datetime

import httpx
import pytest
from githubkit.exception import RequestError, RequestFailed
from githubkit.response import Response

from contracts.digests import STANDING_ISSUE_LABELS, STANDING_ISSUE_TITLE
from services.digests.tracker import (
    MARKER,
    TrackerRefused,
    issue_coordinates,
    marked,
    split_repository,
    transient,
)
from services.digests.triage import TriageItem, triage_id
from services.processes.settings import Settings

pytestmark = pytest.mark.unit

AT = datetime(2026, 11, 30, 6, tzinfo=UTC)
ITEM = "urn:feedbackloop/_Digests/2026-W48/coach"


def test_an_item_is_one_aggregate_per_tenant_and_item_id() -> None:
    """W129: the item id names the item; another tenant's same item is another aggregate."""
    assert triage_id("a", ITEM) == triage_id("a", ITEM)
    assert triage_id("a", ITEM) != triage_id("b", ITEM)


def test_a_filed_item_carries_its_issue_for_the_following_weeks() -> None:
    item = TriageItem.filed(
        tenant_id="a", item_id=ITEM, week="2026-W48", agent="Coach", agent_id="coach",
        repository="acme/coach", issue_url="https://github.com/acme/coach/issues/7", at=AT,
    )  # fmt: skip
    (event,) = item.collect_events()
    assert isinstance(event, TriageItem.Filed)
    assert item.issue_url == "https://github.com/acme/coach/issues/7"  # W131
    assert item.id == triage_id("a", ITEM)


def test_an_unrouted_item_carries_no_issue_and_says_why() -> None:
    item = TriageItem.unrouted(
        tenant_id="a", item_id=ITEM, week="2026-W48", agent="Coach", agent_id="coach",
        finding="no repository", at=AT,
    )  # fmt: skip
    assert (item.issue_url, item.finding) == (None, "no repository")


def test_the_standing_issue_is_titled_and_labelled_as_w133_says() -> None:
    assert STANDING_ISSUE_TITLE.format(agent="Coach") == "Wrong answers — Coach"
    assert STANDING_ISSUE_LABELS == ("feedback", "wrong-answer-digest")


def test_a_body_carries_its_items_marker() -> None:
    assert marked("numbers", ITEM).endswith(MARKER.format(key=ITEM) + "\n")


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://github.com/acme/coach/issues/7", ("acme", "coach", 7)),
        ("https://ghe.example.org/acme/coach/issues/12#issuecomment-3", ("acme", "coach", 12)),
    ],
)
def test_an_issue_url_gives_its_repository_and_number(
    url: str, expected: tuple[str, str, int]
) -> None:
    assert issue_coordinates(url) == expected


def test_what_is_not_an_issue_or_a_repository_is_refused() -> None:
    with pytest.raises(TrackerRefused):
        issue_coordinates("https://github.com/acme/coach/pull/7")
    with pytest.raises(TrackerRefused):
        split_repository("acme")


def failed(status: int) -> RequestFailed:
    request = httpx.Request("GET", "https://api.github.com/repos/a/b/issues")
    return RequestFailed(Response(httpx.Response(status, request=request), object))


def test_the_tracker_is_waited_for_only_where_a_later_try_may_pass() -> None:
    """D66: the network, 5xx, 408 and 429 are waited for; other refusals are not."""
    assert transient(failed(503))
    assert transient(failed(429))
    assert transient(RequestError(httpx.ConnectError("refused")))
    assert not transient(failed(404))
    assert not transient(failed(401))


def test_a_trackers_token_is_never_shown() -> None:
    settings = Settings(trackers={"t": {"url": "https://api.github.com", "token": "ghp_secret"}})
    assert "ghp_secret" not in repr(settings)
    assert settings.trackers["t"].token.get_secret_value() == "ghp_secret"
