"""What the Proposals page draws from a proposal as its read model keeps it: the history and the
moves still open (SPEC C34, decisions D54, D87, D88)."""

from typing import Any

import pytest

from services.console.pages.proposals import history, moves

pytestmark = pytest.mark.unit

RAISED = "2026-11-30T06:00:00+00:00"
DECIDED = "2026-11-30T09:00:00+00:00"


def proposal(**shown: Any) -> dict[str, Any]:
    return {
        "raisedAt": RAISED,
        "reviewedBy": None,
        "decidedAt": None,
        "state": "Proposed",
        "reason": None,
        "supersededBy": None,
        "resultingReleaseId": None,
        "waitingForRelease": False,
    } | shown


def test_a_raised_proposal_can_only_be_picked_up() -> None:
    fresh = proposal()
    assert history(fresh) == [(RAISED, "the proposal generator", "raised it")]
    assert moves(fresh) == ("pick-up",)


def test_a_proposal_in_review_is_decided_and_names_who_took_it_up() -> None:
    taken = proposal(state="InReview", reviewedBy="mia")
    assert history(taken)[1:] == [(None, "mia", "picked it up")]
    assert moves(taken) == ("decide",)


def test_an_approved_proposal_waits_for_its_release_and_cannot_be_decided_again() -> None:
    approved = proposal(
        state="InReview", reviewedBy="mia", decidedAt=DECIDED, waitingForRelease=True
    )
    assert history(approved)[-1] == (
        DECIDED,
        "mia",
        "accepted it; a Draft release was requested",
    )
    assert moves(approved) == ("release",)


def test_an_accepted_proposal_shows_its_release_and_offers_nothing() -> None:
    accepted = proposal(
        state="Accepted", reviewedBy="mia", decidedAt=DECIDED, resultingReleaseId="release-7"
    )
    assert history(accepted)[-1] == (None, None, "its Draft release release-7 recorded")
    assert moves(accepted) == ()


def test_a_rejection_shows_its_reason_and_a_superseded_proposal_its_successor() -> None:
    rejected = proposal(state="Rejected", reviewedBy="mia", decidedAt=DECIDED, reason="no")
    assert history(rejected)[-1] == (DECIDED, "mia", "rejected it: no")
    assert moves(rejected) == ()
    newer = "5f0c0d8e-1111-4c4c-9c9c-000000000001"
    superseded = proposal(state="Superseded", decidedAt=DECIDED, supersededBy=newer)
    assert history(superseded)[-1] == (DECIDED, None, f"superseded by proposal {newer}")
    assert moves(superseded) == ()
