"""What the HTTP API answers about eval cases and their runs (SPEC W41–W64): the case, each
run and conversation with its three checks, the pass rate over time, and the runs under way.
The shared pieces (``Answer``, positions, cursors, examples) are ``contracts.answers``'."""

from typing import Literal

from pydantic import Field

from contracts import eval_examples as examples
from contracts.answers import Answer, Cursor, Order, Position, Timestamp, shown_as
from contracts.runners import Runner


class CaseWritten(Answer):
    model_config = shown_as(examples.CASE_LIFTED, examples.CASE_CONFIRMED)

    case_id: str = Field(alias="caseId", json_schema_extra={"format": "uuid"})
    ref: str
    agent: str
    confirmed_by: str | None = Field(alias="confirmedBy")
    position: Position


class ThreadScoreView(Answer):
    looked: bool
    invented: bool
    correct: bool | None
    non_answer: bool
    reason: str | None


class ToolCallView(Answer):
    name: str
    arguments: str = ""
    result: str = ""


class ThreadView(Answer):
    index: int
    thread_ref: str = Field(alias="threadRef")
    link: str
    score: ThreadScoreView
    model_name: str | None = Field(alias="modelName")
    text: str
    tool_calls: list[ToolCallView] = Field(alias="toolCalls")
    at: Timestamp
    trace_id: str | None = Field(
        default=None, alias="traceId", description="W3C trace id of the agent's reply."
    )
    span_id: str | None = Field(
        default=None, alias="spanId", description="W3C span id of the agent's reply."
    )
    gen_ai: dict[str, str] | None = Field(
        default=None, alias="genAi", description="OpenTelemetry GenAI attributes of the reply."
    )


RUNNER_TEXT = (
    "Who ran it (SPEC W58): 'night' for a nightly run, 'manual' for a person's run on demand; "
    "runs compare only when runner and ranBy agree."
)


class ThreadRecord(ThreadView):
    model_config = shown_as(examples.THREAD_RECORD)

    ran_by: str = Field(alias="ranBy")
    runner: Runner = Field(description=RUNNER_TEXT)
    model: str | None
    effort: str


class RunSummaryView(Answer):
    runs: int
    scored: int
    non_answers: int
    looked: int
    not_invented: int
    correct: int
    looked_rate: float | None
    correct_rate: float | None
    passed: bool
    reasons: list[str]


class RunView(Answer):
    run_id: str = Field(alias="runId")
    ran_by: str = Field(alias="ranBy")
    runner: Runner = Field(description=RUNNER_TEXT)
    night: str | None = Field(
        default=None, description="The night (yyyy-MM-dd) that ran it; null for a run on demand."
    )
    model: str | None
    effort: str
    summary: RunSummaryView
    threads: list[ThreadView]
    recorded_at: Timestamp = Field(alias="recordedAt")


class LastRun(RunView):
    position: Order


class PassRatePoint(Answer):
    run_id: str = Field(alias="runId")
    recorded_at: Timestamp = Field(alias="recordedAt")
    passed: bool
    correct_rate: float | None = Field(alias="correctRate")


class RunnerHistory(Answer):
    """One runner's pass-rate history of a case (SPEC W58: never mixed with another's)."""

    runner: Runner = Field(description=RUNNER_TEXT)
    ran_by: str = Field(alias="ranBy")
    runs: int
    passed: int
    pass_rate: float = Field(alias="passRate", description="passed / runs, of this runner only.")
    points: list[PassRatePoint] = Field(description="Each of its runs, newest first.")


class CaseView(Answer):
    case_id: str = Field(alias="caseId")
    ref: str
    source: str
    agent: str
    prompt: str | None
    context: list[str]
    must_ground: list[str] = Field(alias="mustGround")
    must_not_assert: list[str] = Field(alias="mustNotAssert")
    must_assert: str | None = Field(alias="mustAssert")
    model: str | None
    confirmed_by: str | None = Field(alias="confirmedBy")
    last_run: LastRun | None = Field(
        alias="lastRun", description="The newest run of any runner; see lastRuns to compare."
    )
    last_runs: list[LastRun] = Field(
        alias="lastRuns",
        description="The last run of each runner (SPEC W58), newest first: a night's and each "
        "person's on demand apart.",
    )
    passed: bool | None = Field(description="The verdict of lastRun.")
    lifted_at: Timestamp = Field(alias="liftedAt")
    position: Order


class CaseWithRuns(CaseView):
    model_config = shown_as(examples.CASE_WITH_RUNS)

    runs: list[RunView]
    history: list[RunnerHistory] = Field(
        description="The pass-rate history, one line per runner (SPEC W58)."
    )


class CaseList(Answer):
    model_config = shown_as(examples.CASE_LIST)

    items: list[CaseView]
    next: Cursor


class RunRecorded(Answer):
    model_config = shown_as(examples.RUN_RECORDED)

    case_id: str = Field(alias="caseId")
    run_id: str = Field(alias="runId")
    model: str | None
    effort: Literal["low", "medium", "high"] | str
    threads: list[ThreadView]
    summary: RunSummaryView
    ran_by: str = Field(alias="ranBy")
    runner: Runner = Field(description=RUNNER_TEXT)
    position: Position


class RunUnderWayView(Answer):
    run_id: str = Field(alias="runId", json_schema_extra={"format": "uuid"})
    ran_by: str = Field(alias="ranBy")
    conversations: int = Field(description="How many conversations the run has.")
    done: int = Field(description="How many of them are scored so far.")
    started_at: Timestamp = Field(alias="startedAt")


class RunsUnderWay(Answer):
    """A case's runs still running: nothing of a run is recorded before its last
    conversation is scored, so this is where a caller watches it (decisions D80)."""

    model_config = shown_as(examples.RUNS_UNDER_WAY)

    items: list[RunUnderWayView]
