"""The weekly digest per agent (SPEC W104–W138): its tables, the event posted once per agent,
and what the API answers about it.

A digest folds every SUBMITTED report of one ISO week (``YYYY-Www``, Monday 00:00 UTC to the
next Monday 00:00 UTC, SPEC §3.9) into one table per agent and one per model. It is built once
per tenant and week and posted once: one ``DigestPosted`` event per agent.

The consumer's rules (a triage service keeping one standing issue per agent), W129–W134:

- W129: an item's id is the ``instance`` (the CloudEvent ``source``) + ``/`` + ``feedbackPath``.
- W130: the same agent's items of the previous twelve weeks are never searched for: their ids
  are spelled out in ``previousItems``, nearest week first.
- W131: the first ``issueUrl`` found on those items is carried onto the new item.
- W132: with an ``issueUrl``, comment on that issue with the week's numbers; without one, file
  an issue once.
- W133: a filed issue is titled ``Wrong answers — <agent>`` and labelled ``feedback`` and
  ``wrong-answer-digest``.
- W134: it is filed in the repository that owns the agent, never in the fleet's own feedback
  inbox (``Systemorph/MeshWeaver.Feedback``).
"""

from typing import Literal

from pydantic import Field

from contracts import digest_examples as examples
from contracts.answers import Answer, Cursor, shown_as
from contracts.feedback import Contract
from contracts.runners import Runner
from contracts.scalars import Week

Counts = dict[str, int]

STANDING_ISSUE_TITLE = "Wrong answers — {agent}"  # W133
STANDING_ISSUE_LABELS = ("feedback", "wrong-answer-digest")  # W133


class Trend(Contract):
    """W118: this week's count against the week before's."""

    previous: int = Field(description="Submitted reports of the agent in the week before.")
    change: int = Field(description="This week's total minus the week before's.")


class RunnerHealth(Contract):
    """W120 for one runner (W58): of the agent's cases with a last run by it, how many passed."""

    runner: Runner = Field(description="'night': the nightly run; 'manual': a person's on demand.")
    ran_by: str | None = Field(
        alias="ranBy",
        description="Who ran them on demand, as 'someone' or 'someone (n)' when several did, "
        "never a person's id (decisions D135); null for the night.",
    )
    with_run: int = Field(alias="withRun")
    passed: int


class Health(Contract):
    """W120: of the agent's eval cases that have a last run, how many passed, like with like
    (W58): ``withRun`` and ``passed`` are the night's, ``runners`` has every runner's figure
    (decisions D53)."""

    with_run: int = Field(alias="withRun", description="Cases with a last run by the night.")
    passed: int = Field(description="Of those, how many passed.")
    runners: list[RunnerHealth] = Field(
        default_factory=list,
        description="One figure per runner: the night first, then each person on demand.",
    )


class AgentTable(Contract):
    """One agent's week (W116–W120, W135)."""

    agent: str = Field(
        description="The agent's path; '(unknown agent)' for reports without a labelled "
        "block (W122)."
    )
    agent_id: str = Field(alias="agentId", description="The agent path with '/' as '_'.")
    total: int
    counts: Counts = Field(
        description="Submitted reports by kind (W116); '(no kind)' when the report carries no "
        "labelled block."
    )
    informational: Counts = Field(
        description="Counts shown for information only (W135): retrieval reports are filed as "
        "bugs already, so they call for no action here. Included in counts and total too."
    )
    models: list[str] = Field(description="The models seen in the week's reports (W117).")
    trend: Trend
    cases_lifted: list[str] = Field(
        alias="casesLifted", description="Refs of eval cases lifted from this week's reports."
    )
    health: Health


class ModelTable(Contract):
    """W121: per model, across agents, the counts by kind."""

    model: str
    total: int
    counts: Counts


class DigestTables(Contract):
    """What the pure build makes of a week (W115)."""

    week: Week
    reports: int = Field(
        description="Submitted reports read in the week (a lower bound when truncated)."
    )
    truncated: bool = Field(
        description="The read filled its page bound (W112): every count is a lower bound."
    )
    bound: int = Field(description="The page bound of the read, newest first.")
    agents: list[AgentTable]
    models: list[ModelTable]


class BuildWeeklyDigest(Contract):
    """Create the digest of ``week`` for the issuing tenant, once (W109): a second create
    loses and changes nothing."""

    tables: DigestTables


class PostWeeklyDigest(Contract):
    """Post the digest once (W123–W128): one event per agent, then the stamp."""

    week: Week
    instance: str
    url: str
    routes: list[str] = Field(description="Where the posts go; empty when none is configured.")


class RecordDigestDelivery(Contract):
    """One attempt to deliver an agent's post to the hand-over webhook."""

    week: Week
    agent_id: str = Field(alias="agentId")
    status_code: int | None = Field(default=None, alias="statusCode")
    error: str | None = None
    final: bool


class DigestPosted(Contract):
    """One agent's weekly digest, posted once (W123, W125), on
    ``evaluation.feedback.v2.digest-posted``. ``feedbackPath`` is the item's identity (W126): a
    redelivery is the same item.

    v2 (decisions D151): the health line's ``withRun`` and ``passed`` (in ``health`` and in
    ``extraContext``) are the night's figure alone, like with like (W58, D53), each person's
    runs on demand apart in ``health.runners``; on v1, no longer published, they counted every
    runner's newest run.

    How a triage consumer keeps one standing issue per agent (W129–W134): the item id is
    ``instance`` (the CloudEvent source) + ``/`` + ``feedbackPath`` (``itemId``); the same
    agent's items of the previous twelve weeks are ``previousItems``, spelled out, never
    searched for; the first ``issueUrl`` found on them is carried onto the new item; with an
    ``issueUrl``, comment on that issue with the week's numbers, without one, file an issue
    once, titled ``Wrong answers — <agent>`` (``standingIssueTitle``) and labelled ``feedback``
    and ``wrong-answer-digest`` (``standingIssueLabels``), in the repository that owns the
    agent, never in the fleet's feedback inbox (Systemorph/MeshWeaver.Feedback).
    """

    digest_id: str = Field(alias="digestId", json_schema_extra={"format": "uuid"})
    tenant_id: str = Field(alias="tenantId")
    event: Literal["digest"] = "digest"
    week: Week
    agent: str
    agent_id: str = Field(alias="agentId")
    feedback_path: str = Field(alias="feedbackPath", examples=["_Digests/2026-W48/Office_Coach"])
    item_id: str = Field(alias="itemId", description="instance + '/' + feedbackPath (W129).")
    message: str = Field(description="The agent's digest as readable text.")
    extra_context: str = Field(
        alias="extraContext", description="The same digest as JSON text (an AgentTable)."
    )
    url: str = Field(description="The digest's address in this service's API.")
    health: Health = Field(
        description="The agent's health line (W120): withRun and passed are the night's "
        "figure; runners holds every runner's, the night first (decisions D53, D151)."
    )
    previous_items: list[str] = Field(
        alias="previousItems",
        description="The item ids of the same agent's previous twelve weeks, nearest first, "
        "spelled out so nothing is searched (W130).",
    )
    standing_issue_title: str = Field(alias="standingIssueTitle", description="W133.")
    standing_issue_labels: list[str] = Field(alias="standingIssueLabels", description="W133.")


# What the API answers ------------------------------------------------------------------------
# Answers, not commands: on the ``Answer`` base (frozen, extra="forbid", as ``Contract``), so
# ``/openapi.json`` shows each with its example (``contracts/answers.py``). The tables inside
# stay the ``Contract`` the build command carries.


class PostedState(Answer):
    """What was posted (W124, W128): the stamp that makes the post run once."""

    posted_at: str | None = Field(alias="postedAt", json_schema_extra={"format": "date-time"})
    routes: list[str]
    identities: list[str] = Field(description="The feedbackPaths posted, one per agent.")
    note: str | None = Field(description="Why nothing was posted, when nothing was.")
    deliveries: dict[str, str] = Field(
        description="Per agentId, the hand-over webhook's outcome (when one is configured)."
    )


class DigestSummary(Answer):
    week: Week
    reports: int
    agents: int
    truncated: bool
    built_at: str = Field(alias="builtAt", json_schema_extra={"format": "date-time"})
    posted_at: str | None = Field(alias="postedAt", json_schema_extra={"format": "date-time"})


class DigestList(Answer):
    """Every week's digest, newest week first (W137)."""

    model_config = shown_as(examples.DIGEST_LIST)

    items: list[DigestSummary]
    next: Cursor


class DigestView(Answer):
    """One week: its tables and what was posted (W137)."""

    model_config = shown_as(examples.DIGEST_VIEW)

    digest_id: str = Field(alias="digestId", json_schema_extra={"format": "uuid"})
    week: Week
    built_at: str = Field(alias="builtAt", json_schema_extra={"format": "date-time"})
    tables: DigestTables
    posted: PostedState
