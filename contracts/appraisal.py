"""Appraisal's command: a person writes the tenant's charter (SPEC M07–M16).

The document is TOML, sent as the body of ``PUT /factory/appraisal/charter``; it is parsed
once, at the door, and the parse result is what is stored.
"""

from typing import Annotated, Literal

from pydantic import Field, JsonValue, StringConstraints

from contracts import example_story as examples
from contracts import feedback_examples
from contracts.answers import Answer, Position, Timestamp, shown_as
from contracts.feedback import Contract

JsonDict = dict[str, JsonValue]

MAX_CHARTER_DOCUMENT = 64 * 1024


class WriteCharter(Contract):
    """Replace the tenant's charter with this document (order of ``[[line]]`` is rank)."""

    document: Annotated[str, StringConstraints(max_length=MAX_CHARTER_DOCUMENT)]


# ---- Answers of the API ---------------------------------------------------------------------

POSITION = feedback_examples.FEEDBACK_WRITTEN["position"]
EXAMPLE_RUN = "5d0c9a4e-1f7b-4c53-8e21-6a9b3f0d7c18"
READING: JsonDict = {
    "kind": "request_closure",
    "setpoint": "2d",
    "state": "observed",
    "value": 313200.0,
    "shown": "3d 15h",
    "within": False,
}
SOURCES: JsonDict = {"read": 5, "unreadable": 0, "unreadableNames": []}


def _appraisal(label: str, positive: float, negative: float, shown: str,
               outcomes: list[JsonValue], counts: JsonDict) -> JsonDict:  # fmt: skip
    return {
        "label": label,
        "valence": {"positive": positive, "negative": negative, "shown": shown},
        "outcomes": outcomes,
        "partial": False,
        "sources": SOURCES,
        "counts": counts,
        "since": None,
        "until": None,
    }


def _outcome(outcome: str, channel: str, sign: float, agency: str, cite: str,
             goal: str | None = None, visible: bool = False) -> JsonDict:  # fmt: skip
    return {
        "goal": goal,
        "channel": channel,
        "sign": sign,
        "agency": agency,
        "visible": visible,
        "controllable": None,
        "cite": cite,
        "outcome": outcome,
    }


RUN_OUTCOMES: list[JsonValue] = [
    _outcome("correction", "edit", -1.0, "owner", examples.CORRECTION_ID),
    _outcome("escalation", "intervention", -1.0, "owner", "0f5ad0a4-5c51-5d57-9b0e-1e0c1b1a3e77"),
    _outcome("report-not-found", "counter", -1.0, "self", examples.REPORT_ID, "charter:queue"),
]
COUNTS: JsonDict = {"feedback": 2, "reports": 1, "evalRuns": 0, "runs": 1}
SHARE: JsonDict = {"rate": 0.25, "runs": 1, "eligible": 4, "unknown": 2}
CHARTER_WRITTEN: JsonDict = {"lines": 2, "findings": [], "position": POSITION}
CHARTER_VIEW: JsonDict = {
    "document": '[[line]]\nid = "grounded"\ntext = "Answers rest on sources the asker can '
    'read."\n\n[[line]]\nid = "inbox-short"\ntext = "Nobody\'s report waits long."\n'
    'sensor = { kind = "request_closure", setpoint = "2d" }\n',
    "lines": [
        {"rank": 1, "id": "grounded", "text": "Answers rest on sources the asker can read.",
         "sensor": None},
        {"rank": 2, "id": "inbox-short", "text": "Nobody's report waits long.", "sensor": READING},
    ],
    "findings": [],
    "writtenBy": "alice",
    "writtenAt": "2026-11-30T08:02:11.204518+00:00",
}  # fmt: skip
RUN_APPRAISAL: JsonDict = {
    "runId": EXAMPLE_RUN,
    **_appraisal("distress", 0.0, 3.0, "\u22123.0", RUN_OUTCOMES, COUNTS),
    "steps": [{"stepId": "s2", "finding": "null-step", "check": "unverified", "checkChanges": 0}],
}
AGENT_ID: JsonDict = {"agent": "Office/Agent/Coach"}
AGENT_APPRAISAL: JsonDict = (
    AGENT_ID
    | _appraisal(
        "distress",
        1.0,
        3.0,
        "+1.0 \u22123.0",
        [*RUN_OUTCOMES, _outcome("reply-accepted", "edit", 1.0, "self", examples.RATING_ID)],
        {"feedback": 3, "reports": 1, "evalRuns": 0, "runs": 6},
    )
    | {
        "health": {
            "runs": 6,
            "developmentExcluded": 1,
            "goalDrift": SHARE,
            "namedNothing": 1,
            "stepNulls": {"rate": 0.0, "runs": 0, "eligible": 4, "unknown": 2},
            "stepReopens": {"rate": None, "runs": 0, "eligible": 0, "unknown": 6},
        }
    }
)
LINE_ID: JsonDict = {"lineId": "inbox-short"}
LINE_APPRAISAL: JsonDict = (
    LINE_ID
    | _appraisal(
        "distress",
        0.0,
        0.5,
        "\u22120.5",
        [
            _outcome(
                "report-left-open",
                "commitment",
                -0.5,
                "owner",
                examples.REPORT_ID,
                "charter:inbox-short",
                True,
            )
        ],
        {"feedback": 12, "reports": 4, "evalRuns": 9, "runs": 30},
    )
    | {"reading": READING}
)


class CharterWritten(Answer):
    model_config = shown_as(CHARTER_WRITTEN)

    lines: int = Field(description="How many lines the charter has now.")
    findings: list[str] = Field(description="What to look at, short of a refusal (M14).")
    position: Position


class SensorReading(Answer):
    """SPEC M20: unreadable, deferred, nothing-waiting, too-little-evidence or observed."""

    kind: str
    setpoint: str
    state: Literal["unreadable", "deferred", "nothing-waiting", "too-little-evidence", "observed"]
    value: float | None = Field(description="Seconds, a count or a share; null unless observed.")
    shown: str | None
    within: bool | None = Field(description="Null unless observed: missing is never within.")


class CharterLineView(Answer):
    rank: int
    id: str
    text: str
    sensor: SensorReading | None


class CharterView(Answer):
    model_config = shown_as(CHARTER_VIEW)

    document: str
    lines: list[CharterLineView]
    findings: list[str]
    written_by: str | None = Field(alias="writtenBy")
    written_at: Timestamp | None = Field(alias="writtenAt")


class SignedOutcome(Answer):
    """SPEC M22: a GoalError; ``cite`` is an id or a counter name, never prose (M27)."""

    goal: str | None
    channel: str
    sign: float
    agency: str
    visible: bool
    controllable: bool | None
    cite: str
    outcome: str = Field(description="Its row of the contribution table.")


class ValenceView(Answer):
    """SPEC M41: two sums, never netted."""

    positive: float
    negative: float
    shown: str


class SourcesView(Answer):
    read: int
    unreadable: int
    unreadable_names: list[str] = Field(alias="unreadableNames")


class FactCounts(Answer):
    feedback: int
    reports: int
    eval_runs: int = Field(alias="evalRuns")
    runs: int


class AppraisalView(Answer):
    label: str
    valence: ValenceView
    outcomes: list[SignedOutcome]
    partial: bool
    sources: SourcesView
    counts: FactCounts
    since: Timestamp | None
    until: Timestamp | None


class StepReadingView(Answer):
    """SPEC M52, M53: a completed step's finding and its declared check."""

    step_id: str = Field(alias="stepId")
    finding: Literal["null-step", "ended-on-failure", "ended-on-refusal"] | None
    check: Literal["passed", "failed", "unverified"] | None
    check_changes: int = Field(alias="checkChanges", description="Written after completion.")


class RunAppraisal(AppraisalView):
    model_config = shown_as(RUN_APPRAISAL)

    run_id: str = Field(alias="runId")
    steps: list[StepReadingView] = Field(default_factory=list)


class ShareView(Answer):
    """SPEC M51: a per-run share with its numerator and denominator; unknown runs apart."""

    rate: float | None
    runs: int
    eligible: int
    unknown: int


class HealthView(Answer):
    runs: int
    development_excluded: int = Field(alias="developmentExcluded")
    goal_drift: ShareView = Field(alias="goalDrift")
    named_nothing: int = Field(alias="namedNothing")
    step_nulls: ShareView = Field(alias="stepNulls")
    step_reopens: ShareView = Field(alias="stepReopens")


class AgentAppraisal(AppraisalView):
    model_config = shown_as(AGENT_APPRAISAL)

    agent: str
    health: HealthView


class LineAppraisal(AppraisalView):
    model_config = shown_as(LINE_APPRAISAL)

    line_id: str = Field(alias="lineId")
    reading: SensorReading | None = None
