"""The five neighbour events we consume (``contracts.neighbours``), read tolerantly: a field we
do not know is ignored, never a dead letter. Each is handled by the context it feeds, through
the command bus's one registry: the datasets context harvests runs and validations (SPEC C24,
C25), the learning context keeps evaluations, drift and skill candidates as evidence (C39–C41).

Each names the scope of the HTTP route that writes the same fact (SPEC C52), which a key must
hold to post it to ``POST /factory/events``: a harvested run or a validation is a dataset task
(``POST .../datasets/{id}/tasks``: ``factory.evaluation.run``), and an evaluation's result,
a drift or a skill candidate is evaluation evidence, which only an evaluation run records over
HTTP (``POST /factory/evals/cases/{id}/runs``: ``factory.evaluation.run``).
"""

from contracts import topics
from contracts.envelope import (
    ArtifactValidatedMessage,
    DriftDetectedMessage,
    EvaluationCompletedMessage,
    RunCompletedMessage,
    SkillCandidateProposedMessage,
)
from services.edge.auth import Scope
from services.kafka.inbound.subscription import Subscription

EVALUATION_RUN: Scope = "factory.evaluation.run"

# Harvested by the datasets context (SPEC C24, C25).
DATASET_SUBSCRIPTIONS = (
    Subscription(
        topic=topics.RUN_COMPLETED,
        envelope=RunCompletedMessage,
        title="RunCompleted",
        description="A run ended; it becomes a dataset task candidate (HarvestTask).",
        strict=False,
        scope=EVALUATION_RUN,
    ),
    Subscription(
        topic=topics.ARTIFACT_VALIDATED,
        envelope=ArtifactValidatedMessage,
        title="ArtifactValidated",
        description="A validator's outcome, enriching the dataset tasks (HarvestValidation).",
        strict=False,
        scope=EVALUATION_RUN,
    ),
)

# Evidence of the learning context (SPEC C39–C41).
LEARNING_SUBSCRIPTIONS = (
    Subscription(
        topic=topics.EVALUATION_COMPLETED,
        envelope=EvaluationCompletedMessage,
        title="EvaluationCompleted",
        description="A suite scored an asset; failed gates and regressions are proposal "
        "evidence (RaiseFromEvaluation).",
        strict=False,
        scope=EVALUATION_RUN,
    ),
    Subscription(
        topic=topics.DRIFT_DETECTED,
        envelope=DriftDetectedMessage,
        title="DriftDetected",
        description="An asset's metric drifted; proposal evidence (RaiseFromDrift).",
        strict=False,
        scope=EVALUATION_RUN,
    ),
    Subscription(
        topic=topics.SKILL_CANDIDATE_PROPOSED,
        envelope=SkillCandidateProposedMessage,
        title="SkillCandidateProposed",
        description="Reinforced procedural memory; a skill proposal's evidence "
        "(RaiseSkillProposal).",
        strict=False,
        scope=EVALUATION_RUN,
    ),
)
