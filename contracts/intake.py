"""The triage intake of the weekly digest (SPEC W129–W136): the command that records what the
tracker did with one agent's weekly item, and what the API answers about the standing-issue
ledger.

An item (W129: ``instance`` + ``/`` + ``feedbackPath``) is taken in once, with one of three
outcomes: ``filed`` (no earlier item carried an issue: one was filed, W132–W134),
``commented`` (the first ``issueUrl`` of the previous twelve weeks' items was carried onto it
and the week's numbers commented there, W131, W132) or ``unrouted`` (nothing could be filed:
the register names no repository for the agent, or the tenant has no tracker; a finding, not
a guess, W134).
"""

from typing import Literal

from pydantic import Field
from pydantic.config import JsonDict

from contracts.answers import Answer, Timestamp, shown_as
from contracts.feedback import Contract

Outcome = Literal["filed", "commented", "unrouted"]


class RecordTriage(Contract):
    """What the intake did with one weekly item; the service's own command (decisions D64)."""

    item_id: str = Field(alias="itemId", min_length=1, max_length=2000)
    week: str
    agent: str = Field(min_length=1, max_length=500)
    agent_id: str = Field(alias="agentId", min_length=1, max_length=500)
    outcome: Outcome
    repository: str | None = None
    issue_url: str | None = Field(default=None, alias="issueUrl")
    comment_url: str | None = Field(default=None, alias="commentUrl")
    finding: str | None = None


ITEM: JsonDict = {
    "itemId": "https://feedback.example.org/_Digests/2026-W48/officecoach",
    "week": "2026-W48",
    "outcome": "commented",
    "issueUrl": "https://github.com/acme/office-coach/issues/7",
    "commentUrl": "https://github.com/acme/office-coach/issues/7#issuecomment-42",
    "finding": None,
    "takenAt": "2026-11-30T09:00:05+00:00",
}
STANDING: JsonDict = {
    "agent": "AgenticOffice/Agent/OfficeCoach",
    "repository": "acme/office-coach",
    "issueUrl": "https://github.com/acme/office-coach/issues/7",
    "digests": 3,
    "comments": 2,
    "lastWeek": "2026-W48",
    "finding": None,
}


class TriagedItem(Answer):
    """One weekly item as the intake took it in."""

    model_config = shown_as(ITEM)

    item_id: str = Field(alias="itemId")
    week: str
    outcome: Outcome
    issue_url: str | None = Field(alias="issueUrl")
    comment_url: str | None = Field(alias="commentUrl")
    finding: str | None
    taken_at: Timestamp = Field(alias="takenAt")


class StandingIssue(Answer):
    """One agent's standing issue: where it is, and how many digests it took in (W136: the
    digests have a column of their own, apart from the comments made)."""

    model_config = shown_as(STANDING)

    agent: str
    repository: str | None
    issue_url: str | None = Field(alias="issueUrl")
    digests: int
    comments: int
    last_week: str = Field(alias="lastWeek")
    finding: str | None = Field(
        description="Why the last item was not filed (no repository in the register, no "
        "tracker for the tenant); null when it was."
    )


class StandingIssueList(Answer):
    """Every agent's standing issue of the tenant, by agent."""

    model_config = shown_as({"items": [STANDING]})

    items: list[StandingIssue]


class StandingIssueView(Answer):
    """One agent's standing issue and every weekly item it took in, newest week first."""

    model_config = shown_as({"standing": STANDING, "items": [ITEM]})

    standing: StandingIssue
    items: list[TriagedItem]
