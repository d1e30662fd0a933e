"""Events other services publish and this one consumes (SPEC C24, C25, C39–C41).

Their owners write them; we read them tolerantly: a field we do not know is kept on the model
and ignored, so a neighbour adding one never makes a dead letter. Every field we do read is
typed and bounded by the scalars every door reads with (``contracts.scalars``): an instant
within years 1 to 9999 in UTC, a finite measure the rules can sum, no NUL, no blank name, an
``artifact:`` reference only in its one spelling. Each arrives as a CloudEvent (structured
JSON mode) whose ``tenantid`` attribute says whose it is; ``actor`` is optional here (the
``source`` stands for it).

- RunCompleted (run control, ``factory.runs.v1.run-completed``): the run becomes a dataset
  task candidate (HarvestTask); its counters, drafts, questions, stops and steps feed
  appraisal (``contracts.runtime_facts``).
- ArtifactValidated (artifact service, ``factory.artifacts.v1.artifact-validated``): validator
  outcomes enrich tasks (HarvestValidation).
- EvaluationCompleted (quality scoring, ``factory.quality.v1.evaluation-completed``): failed
  gates and regressions are proposal evidence (RaiseFromEvaluation).
- DriftDetected (quality scoring, ``factory.quality.v1.drift-detected``): drift is proposal
  evidence (RaiseFromDrift).
- SkillCandidateProposed (memory promotion, ``factory.memory.v1.skill-candidate-proposed``):
  evidence of a skill-improvement proposal (RaiseSkillProposal).

The seed names the events and who sends them, not their fields: the fields below are our
decision, documented in the generated schemas (``contracts/schemas``).
"""

from enum import StrEnum

from pydantic import ConfigDict, Field

from contracts.feedback import Contract
from contracts.runtime_facts import (
    MAX_ITEMS,
    OwnerStop,
    RunDraft,
    RunQuestion,
    RunRequest,
    RunStep,
)
from contracts.scalars import (
    Count,
    DatasetVersion,
    Instant,
    MaybeArtifactRef,
    Measure,
    Name,
    Ref,
)

MAX_SERVES = 16
MAX_GATES = 64


class Neighbour(Contract):
    """A neighbour's event: frozen, read tolerantly (``extra="allow"`` when consumed)."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)


class RunOutcome(StrEnum):
    succeeded = "succeeded"
    failed = "failed"
    cancelled = "cancelled"


class RunCounters(Neighbour):
    """What run control counted in the run (SPEC M28, M47, M50). A counter left out was not
    measured: it reads as unknown, never as zero (M49)."""

    loop_stops: Count | None = Field(default=None, alias="loopStops")
    empty_outputs: Count | None = Field(default=None, alias="emptyOutputs")
    ceiling_hits: Count | None = Field(default=None, alias="ceilingHits")
    boredom_notices: Count | None = Field(
        default=None, alias="boredomNotices", description="Boredom notices the run gave (M28)."
    )
    owner_backlog_decrease: Count | None = Field(
        default=None,
        alias="ownerBacklogDecrease",
        description="By how many items the owner's recorded backlog went down over the run "
        "(M28: +0.5, a weaker attribution than a linked delivery, so never pride).",
    )
    failed_final_calls: Count | None = Field(default=None, alias="failedFinalCalls")
    step_completions: Count | None = Field(default=None, alias="stepCompletions")
    step_measured: Count | None = Field(default=None, alias="stepMeasured")
    step_nulls: Count | None = Field(default=None, alias="stepNulls")
    step_reopens: Count | None = Field(default=None, alias="stepReopens")
    goal_anchor: bool | None = Field(
        default=None, alias="goalAnchor", description="The run started under a named goal."
    )
    goal_plan_writes: Count | None = Field(default=None, alias="goalPlanWrites")
    goal_drift_writes: Count | None = Field(
        default=None, alias="goalDriftWrites", description="Plan writes that changed the goal."
    )
    goal_unnamed_writes: Count | None = Field(default=None, alias="goalUnnamedWrites")
    goal_put_to_owner: bool | None = Field(
        default=None, alias="goalPutToOwner", description="A goal question was stored."
    )
    goal_confirmed: bool | None = Field(
        default=None, alias="goalConfirmed", description="The owner answered it."
    )
    # The agent's outbox and questions as the run ended (SPEC M09's outbox and question
    # sensors; decisions D35). Pending and parked carry no verdict (M30).
    pending_drafts: Count | None = Field(default=None, alias="pendingDrafts")
    oldest_pending_draft_at: Instant | None = Field(default=None, alias="oldestPendingDraftAt")
    parked_questions: Count | None = Field(default=None, alias="parkedQuestions")
    oldest_parked_question_at: Instant | None = Field(default=None, alias="oldestParkedQuestionAt")
    owner_stops: Count | None = Field(default=None, alias="ownerStops")
    # Not rejections (M30): counted so that a reader sees them, contributing nothing.
    shutdowns: Count | None = None
    parkings: Count | None = None
    legacy_interrupts: Count | None = Field(default=None, alias="legacyInterrupts")


class RunCompleted(Neighbour):
    """A run of an agent ended (SPEC C24). Texts are artifacts, referenced by id (C06)."""

    run_id: Ref = Field(alias="runId")
    project_id: Ref | None = Field(default=None, alias="projectId")
    agent_id: Ref = Field(alias="agentId")
    agent_version: Name | None = Field(default=None, alias="agentVersion")
    outcome: RunOutcome
    input_ref: MaybeArtifactRef = Field(
        alias="inputRef", description="Artifact holding the run's input."
    )
    output_ref: MaybeArtifactRef | None = Field(
        default=None, alias="outputRef", description="Artifact holding the run's final output."
    )
    scoring_rule: Name | None = Field(
        default=None,
        alias="scoringRule",
        description="How an answer to this input is scored, when the run says so.",
    )
    serves: list[Ref] = Field(
        default_factory=list,
        max_length=MAX_SERVES,
        description="Goal references `kind:id` the run served (SPEC M01); read as given, an "
        "unknown kind meaning no reference (M05).",
    )
    development: bool = Field(
        default=False, description="A development or test session (excluded from appraisal, M54)."
    )
    counters: RunCounters | None = None
    surface: Name | None = Field(
        default=None, description="Where the run was asked from (web, task, …): `--kind`."
    )
    compacted: bool = Field(default=False, description="The run's context was compacted (M43).")
    drafts: list[RunDraft] = Field(default_factory=list, max_length=MAX_ITEMS)
    questions: list[RunQuestion] = Field(default_factory=list, max_length=MAX_ITEMS)
    stops: list[OwnerStop] = Field(default_factory=list, max_length=MAX_ITEMS)
    requests: list[RunRequest] = Field(default_factory=list, max_length=MAX_ITEMS)
    steps: list[RunStep] = Field(default_factory=list, max_length=MAX_ITEMS)
    completed_at: Instant = Field(alias="completedAt")


class ValidationOutcome(StrEnum):
    passed = "passed"
    failed = "failed"
    warning = "warning"


class ArtifactValidated(Neighbour):
    """A validator looked at an artifact (SPEC C25)."""

    artifact_ref: MaybeArtifactRef = Field(alias="artifactRef")
    run_id: Ref | None = Field(default=None, alias="runId")
    validator: Name
    outcome: ValidationOutcome
    findings: Count = 0
    validated_at: Instant = Field(alias="validatedAt")


class AssetKind(StrEnum):
    """What a proposal can target (SPEC C27's assets)."""

    agent = "agent"
    prompt = "prompt"
    skill = "skill"
    context_strategy = "context-strategy"
    profile = "profile"


class Gate(Neighbour):
    name: Name
    passed: bool
    metric: Name | None = None
    value: Measure | None = None
    threshold: Measure | None = None


class Regression(Neighbour):
    metric: Name
    before: Measure = Field(alias="from")
    after: Measure = Field(alias="to")


class EvaluationCompleted(Neighbour):
    """A suite scored an asset (SPEC C39): failed gates and regressions are evidence."""

    evaluation_id: Ref = Field(alias="evaluationId")
    target_asset_id: Ref = Field(alias="targetAssetId")
    target_kind: AssetKind = Field(default=AssetKind.agent, alias="targetKind")
    target_version: Name | None = Field(default=None, alias="targetVersion")
    dataset_id: Ref | None = Field(default=None, alias="datasetId")
    dataset_version: DatasetVersion | None = Field(default=None, alias="datasetVersion")
    passed: bool
    gates: list[Gate] = Field(default_factory=list, max_length=MAX_GATES)
    regressions: list[Regression] = Field(default_factory=list, max_length=MAX_GATES)
    serves: list[Ref] = Field(default_factory=list, max_length=MAX_SERVES)
    completed_at: Instant = Field(alias="completedAt")


class DriftDetected(Neighbour):
    """A metric of an asset moved away from its baseline (SPEC C40)."""

    drift_id: Ref = Field(alias="driftId")
    target_asset_id: Ref = Field(alias="targetAssetId")
    target_kind: AssetKind = Field(default=AssetKind.agent, alias="targetKind")
    target_version: Name | None = Field(default=None, alias="targetVersion")
    metric: Name
    baseline: Measure
    observed: Measure
    serves: list[Ref] = Field(default_factory=list, max_length=MAX_SERVES)
    detected_at: Instant = Field(alias="detectedAt")


class SkillCandidateProposed(Neighbour):
    """Reinforced procedural memory suggests a skill change (SPEC C41)."""

    candidate_id: Ref = Field(alias="candidateId")
    skill_id: Ref = Field(alias="skillId", description="The skill asset to improve.")
    target_version: Name | None = Field(default=None, alias="targetVersion")
    summary_ref: MaybeArtifactRef | None = Field(default=None, alias="summaryRef")
    reinforcements: Count = Field(description="How often the procedure was reinforced.")
    serves: list[Ref] = Field(default_factory=list, max_length=MAX_SERVES)
    proposed_at: Instant = Field(alias="proposedAt")
