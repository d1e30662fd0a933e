"""Review queues (decisions D160–D165): a tenant's named filters over the Inbox, each with
an optional set of reviewers, and the claims reviewers take on the reports they offer.

A queue is written whole (``PUT``): what the body says is what the queue holds afterwards.
A claim is taken on one report, for the queue's claim time, and released or let expire."""

from typing import Annotated, Literal
from uuid import UUID

from pydantic import Field, StringConstraints
from pydantic.config import JsonDict

from contracts.answers import Answer, Position, Timestamp, shown_as
from contracts.feedback import Contract
from contracts.reports import Category, Kind
from contracts.scalars import Name, NoNul, Ref

MAX_REVIEWERS = 50
MAX_CLAIM_MINUTES = 7 * 24 * 60  # a week: a claim longer than that is an assignment
MAX_AGE_HOURS = 24 * 366
DEFAULT_CLAIM_MINUTES = 30
# A queue's name is a path segment and a console link: letters, digits, dot, dash,
# underscore, as an agent's slug is (decisions D160).
QueueName = Annotated[
    str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
]
OpenStatus = Literal["New", "Triaged"]  # what waits for a reviewer (SPEC W32)


class QueueFilter(Contract):
    """Which of the Inbox's open reports the queue offers; every field left out matches all."""

    agent: Ref | None = Field(default=None, description="The agent's path, exactly.")
    kind: Kind | None = None
    category: Category | None = None
    status: OpenStatus | None = Field(
        default=None, description="New or Triaged; left out: both (closed reports never wait)."
    )
    min_age_hours: Annotated[int, Field(ge=0, le=MAX_AGE_HOURS)] | None = Field(
        default=None, alias="minAgeHours", description="Submitted at least this long ago."
    )
    max_age_hours: Annotated[int, Field(ge=1, le=MAX_AGE_HOURS)] | None = Field(
        default=None, alias="maxAgeHours", description="Submitted at most this long ago."
    )


class DefineQueue(Contract):
    """Define a queue, or replace what it says (its name comes from the path)."""

    filter: QueueFilter = Field(default_factory=QueueFilter)
    reviewers: list[Name] = Field(
        default_factory=list,
        max_length=MAX_REVIEWERS,
        description="Who claims from it; empty: every Reviewer of the tenant (D161).",
    )
    claim_minutes: Annotated[int, Field(ge=1, le=MAX_CLAIM_MINUTES)] = Field(
        default=DEFAULT_CLAIM_MINUTES,
        alias="claimMinutes",
        description="How long a claim holds before it expires (D162).",
    )


class DefineQueueCommand(Contract):
    """``DefineQueue`` with the queue it is about."""

    queue: QueueName
    definition: DefineQueue


class RemoveQueue(Contract):
    queue: QueueName


class ClaimReport(Contract):
    """Claim the given report, for ``queue``'s claim time and under its reviewers."""

    queue: QueueName
    report_id: UUID = Field(alias="reportId")


class ClaimGiven(Contract):
    """The body of a claim of a given report: the queue it is claimed through."""

    queue: QueueName


class ClaimNext(Contract):
    """Claim the first of ``candidates`` nobody holds (the route reads them, oldest waiting
    first, from the queue's read model; the claims decide who wins, D163)."""

    queue: QueueName
    candidates: list[UUID] = Field(max_length=50)


class ReleaseClaim(Contract):
    report_id: UUID = Field(alias="reportId")


QUEUE: JsonDict = {
    "queue": "fabricated",
    "filter": {"kind": "fabricated", "status": "New"},
    "reviewers": ["maria"],
    "claimMinutes": 30,
}


class QueueShown(Answer):
    """A queue as it is defined."""

    model_config = shown_as(QUEUE)

    queue: str
    filter: dict[str, object]
    reviewers: list[str]
    claim_minutes: int = Field(alias="claimMinutes")


class QueueDefined(QueueShown):
    model_config = shown_as(
        {**QUEUE, "position": "sPA7sYQEWu00Q6Luu7AWkjEJYSe9-SLMDwy3p_q_4OCYXwFf"}
    )

    position: Position


class QueueRemoved(Answer):
    model_config = shown_as(
        {"queue": "fabricated", "position": "sPA7sYQEWu00Q6Luu7AWkjEJYSe9-SLMDwy3p_q_4OCYXwFf"}
    )

    queue: str
    position: Position


CLAIM: JsonDict = {
    "reportId": "8c7a1f0e-3b2d-4c5e-9f10-1a2b3c4d5e6f",
    "queue": "fabricated",
    "claimedBy": "maria",
    "claimedAt": "2026-12-05T09:00:00+00:00",
    "expiresAt": "2026-12-05T09:30:00+00:00",
}


class ClaimShown(Answer):
    """A claim held: whose, through which queue, until when."""

    model_config = shown_as(
        {**CLAIM, "position": "sPA7sYQEWu00Q6Luu7AWkjEJYSe9-SLMDwy3p_q_4OCYXwFf"}
    )

    report_id: str = Field(alias="reportId", json_schema_extra={"format": "uuid"})
    queue: str
    claimed_by: str = Field(alias="claimedBy")
    claimed_at: Timestamp = Field(alias="claimedAt")
    expires_at: Timestamp = Field(alias="expiresAt")
    position: Position


class ClaimReleased(Answer):
    model_config = shown_as(
        {
            "reportId": CLAIM["reportId"],
            "position": "sPA7sYQEWu00Q6Luu7AWkjEJYSe9-SLMDwy3p_q_4OCYXwFf",
        }
    )

    report_id: str = Field(alias="reportId", json_schema_extra={"format": "uuid"})
    position: Position


class QueueProgress(Answer):
    """How a queue stands now: open (waiting, unclaimed), claimed, done today and this week
    in the reader's time zone, and the oldest waiting report's submission (D164)."""

    model_config = shown_as(
        {
            "queue": "fabricated",
            "open": 4,
            "claimed": 1,
            "doneToday": 2,
            "doneThisWeek": 9,
            "oldestWaiting": "2026-12-03T16:20:00+00:00",
            "timeZone": "Europe/Zurich",
        }
    )

    queue: str
    open: int
    claimed: int
    done_today: int = Field(alias="doneToday")
    done_this_week: int = Field(alias="doneThisWeek")
    oldest_waiting: Timestamp | None = Field(alias="oldestWaiting")
    time_zone: str = Field(alias="timeZone")


class QueueList(Answer):
    model_config = shown_as({"items": [{**QUEUE, "progress": None}]})

    items: list[dict[str, object]]


class ClaimList(Answer):
    """The caller's claims held now, soonest to expire first ("assigned to me")."""

    model_config = shown_as({"items": [CLAIM]})

    items: list[dict[str, object]]


ZoneName = Annotated[str, StringConstraints(min_length=1, max_length=64), NoNul]
