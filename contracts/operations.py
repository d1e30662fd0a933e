"""What ``/factory/operations`` answers: how the instance's readers stand, a tenant's parked
events, the scheduler's orders, and a retry's release (decisions D94). Readers are figures
of the instance; parked events and failing units are the caller's tenant's own."""

from pydantic import Field
from pydantic.config import JsonDict

from contracts.answers import Answer, Cursor, Timestamp, shown_as

EXAMPLE_READER: JsonDict = {
    "name": "rm_inbox",
    "logPosition": 1042,
    "lag": 0,
    "parked": 1,
    "state": "following",
    "seenSecondsAgo": 1.2,
    "problems": [],
    "incidents": ["1 parked events (feedbackloop parked list)"],
}
EXAMPLE_PARKED: JsonDict = {
    "reader": "rm_inbox",
    "logPosition": 1037,
    "topic": "services.reports.domain:Report.Drafted",
    "reason": 'CheckViolationError: new row for relation "reports" violates a constraint',
    "attempts": 3,
    "released": False,
    "parkedAt": "2026-12-02T09:15:00+00:00",
    "aggregateId": "0b469701-85fc-54bb-a941-d969daa3bc51",
    "aggregateVersion": 1,
    "behind": None,
}


class ReaderStanding(Answer):
    """One reader of the log (or the scheduler) as ``feedbackloop status`` shows it."""

    model_config = shown_as(EXAMPLE_READER)

    name: str
    # A number, not a tenant's token: the log's positions are the instance's (decisions D94).
    log_position: int = Field(
        alias="logPosition", description="The log position it has applied up to."
    )
    lag: int = Field(description="Positions behind the log's head (messages, for inbound).")
    parked: int = Field(description="What it parked, of every tenant: a count.")
    state: str
    seen_seconds_ago: float | None = Field(alias="seenSecondsAgo")
    problems: list[str] = Field(description="What stops it doing its job (not ready).")
    incidents: list[str] = Field(description="What an operator should see to (degraded).")


class Readers(Answer):
    """Every reader of the log and the scheduler: figures of the instance, no tenant's data."""

    model_config = shown_as({"items": [EXAMPLE_READER]})

    items: list[ReaderStanding]


class ParkedEvent(Answer):
    """A log event of your tenant that a reader kept failing on, parked with its reason."""

    model_config = shown_as(EXAMPLE_PARKED)

    reader: str
    log_position: int = Field(
        alias="logPosition", description="Where it is in the log: the retry's `position`."
    )
    topic: str
    reason: str
    attempts: int
    released: bool = Field(description="Released for the reader to try again.")
    parked_at: Timestamp = Field(alias="parkedAt")
    aggregate_id: str | None = Field(alias="aggregateId")
    aggregate_version: int | None = Field(alias="aggregateVersion")
    behind: int | None = Field(description="The position of the parked event it waits behind.")


class ParkedPage(Answer):
    """Your tenant's parked events (to an Operator), and counts."""

    model_config = shown_as({"items": [EXAMPLE_PARKED], "own": 1, "others": 0, "next": None})

    items: list[ParkedEvent]
    own: int = Field(description="All of your tenant's parked events.")
    others: int = Field(
        description="Everything else parked: another tenant's events, inbound messages."
    )
    next: Cursor


class FailingUnit(Answer):
    """One of your tenant's units a scheduled job fails on, tried again at every tick."""

    job: str
    unit: str
    order: str
    reason: str
    attempts: int
    first_failed_at: Timestamp = Field(alias="firstFailedAt")
    last_failed_at: Timestamp = Field(alias="lastFailedAt")


class SchedulerOrders(Answer):
    """The scheduler's last tick, the orders it tries again or gave up, your failing units."""

    model_config = shown_as(
        {"tick": "2026-12-02T09:15:00+00:00", "retrying": {}, "givenUp": {}, "failing": []}
    )

    tick: Timestamp | None
    retrying: dict[str, int] = Field(description="Order name → attempts so far.")
    given_up: dict[str, str] = Field(alias="givenUp", description="Order name → why.")
    failing: list[FailingUnit]


class Released(Answer):
    """How many parked events of the aggregate were released for the reader to apply."""

    model_config = shown_as({"released": 2})

    released: int


EXAMPLE_MESSAGE: JsonDict = {
    "parkedPosition": 12,
    "topic": "feedbackloop.commands.record-feedback",
    "partition": 0,
    "offset": 4711,
    "reason": 'failed 5 times: UndefinedTableError: relation "artifacts" does not exist',
    "code": "failed",
    "size": 412,
    "keptWhole": True,
    "parkedAt": "2026-12-02T09:15:00+00:00",
}


class ParkedMessage(Answer):
    """An inbound Kafka message naming your tenant (its CloudEvents `tenantid`) that could be
    neither applied nor dead-lettered, parked with its reason (decisions D96)."""

    model_config = shown_as(EXAMPLE_MESSAGE)

    # A number of the parked table, not a tenant's sealed token: it says nothing of the log.
    parked_position: int = Field(
        alias="parkedPosition", description="Its number among parked messages: the retry's."
    )
    topic: str
    partition: int
    offset: int
    reason: str
    code: str | None = Field(description="The refusal's code, as a dead letter names it.")
    size: int = Field(description="The message's size in bytes.")
    kept_whole: bool = Field(
        alias="keptWhole", description="Kept whole, so it can be sent again (else: 409)."
    )
    parked_at: Timestamp = Field(alias="parkedAt")


class ParkedMessagesPage(Answer):
    """Your tenant's parked inbound messages (to an Operator), and counts."""

    model_config = shown_as({"items": [EXAMPLE_MESSAGE], "own": 1, "others": 0, "next": None})

    items: list[ParkedMessage]
    own: int = Field(description="All of the parked messages naming your tenant.")
    others: int = Field(
        description="Every other parked message: another tenant's, or naming none (the "
        "instance operator's: `feedbackloop parked retry inbound`)."
    )
    next: Cursor


class SentAgain(Answer):
    """The parked message was sent again to its topic, and its trace dropped."""

    model_config = shown_as({"sent": 12})

    sent: int = Field(description="The position of the message sent again.")
