"""The pure rules of agents' webhooks (decisions D192, D193, D195)."""

from typing import Any

import pytest
from pydantic import ValidationError

from contracts.agent_webhooks import SetAgentWebhook
from services.owners.notices import failing
from services.owners.overview import OWNER_KINDS, waiting_for
from services.owners.sender import SenderSettings


@pytest.mark.parametrize(
    "url",
    ["https://hooks.example/in", "http://127.0.0.1:8080/in", "http://localhost/x",
     "https://hooks.example:8443/a?b=c"],
)  # fmt: skip
def test_an_https_url_or_a_loopback_http_one_is_accepted(url: str) -> None:
    assert SetAgentWebhook(url=url).url == url


@pytest.mark.parametrize(
    "url",
    ["http://hooks.example/in", "ftp://hooks.example/", "https://u:p@hooks.example/",
     "https://hooks.example/#f", "hooks.example/in", "https:///nohost", "https://a b/",
     "https://" + "a" * 2_000],
)  # fmt: skip
def test_any_other_url_is_refused(url: str) -> None:
    with pytest.raises(ValidationError):
        SetAgentWebhook(url=url)


def line(**said: Any) -> dict[str, Any]:
    return {"case": "c", **said}


def test_a_failed_line_or_a_ran_line_whose_run_did_not_pass_is_failing() -> None:
    """D252: a line's ``score.passed`` is its run's verdict, as the nightly runner writes it."""
    assert failing(line(outcome="failed"))
    assert failing(line(outcome="ran", score={"passed": False, "scored": 3}))
    assert failing(line(outcome="ran", score={"passed": False, "scored": 0}))
    assert not failing(line(outcome="ran", score={"passed": True, "scored": 3}))
    assert not failing(line(outcome="skipped"))
    assert not failing(line(outcome="over-cap"))


def test_the_pause_doubles_up_to_its_bound() -> None:
    settings = SenderSettings(backoff_seconds=1.0, max_backoff_seconds=5.0)
    assert [settings.backoff(n) for n in (1, 2, 3, 4, 5)] == [1.0, 2.0, 4.0, 5.0, 5.0]


def test_the_kinds_addressed_to_an_agent_s_owner_are_not_found_and_fabricated() -> None:
    """D251, SPEC W34, W35."""
    assert set(OWNER_KINDS) == {"not-found", "fabricated"}


def test_a_waiting_proposal_waits_for_a_pick_up_a_decision_or_its_release() -> None:
    """D253: what the maintainer's next move on a proposal is."""
    assert waiting_for("Proposed", approved=False) == "pick-up"
    assert waiting_for("InReview", approved=False) == "decision"
    assert waiting_for("InReview", approved=True) == "release"
    assert waiting_for("Accepted", approved=False) == "release"
