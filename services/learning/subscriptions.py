"""What the learning context consumes from Kafka: its neighbours' evidence (SPEC C39–C41)
and the agent registry's answer to a Draft release (C32). Read tolerantly: a field we do not
know is ignored, never a dead letter.

Each names the scope of the HTTP route that writes the same fact (SPEC C52), which a key must
hold to post it to ``POST /factory/events``: an evaluation's result, a drift or a skill
candidate is evaluation evidence, which only an evaluation run records over HTTP
(``POST /factory/evals/cases/{id}/runs``: ``factory.evaluation.run``).
"""

from contracts import topics
from contracts.envelope import (
    DriftDetectedMessage,
    EvaluationCompletedMessage,
    SkillCandidateProposedMessage,
)
from contracts.learning import DraftReleaseOpenedMessage
from services.kafka.inbound.subscription import Subscription

EVALUATION_COMPLETED = Subscription(
    topic=topics.EVALUATION_COMPLETED,
    envelope=EvaluationCompletedMessage,
    title="EvaluationCompleted",
    description="A suite scored an asset; failed gates and regressions are proposal "
    "evidence (RaiseFromEvaluation).",
    strict=False,
    scope="factory.evaluation.run",
)
DRIFT_DETECTED = Subscription(
    topic=topics.DRIFT_DETECTED,
    envelope=DriftDetectedMessage,
    title="DriftDetected",
    description="An asset's metric drifted; proposal evidence (RaiseFromDrift).",
    strict=False,
    scope="factory.evaluation.run",
)
SKILL_CANDIDATE_PROPOSED = Subscription(
    topic=topics.SKILL_CANDIDATE_PROPOSED,
    envelope=SkillCandidateProposedMessage,
    title="SkillCandidateProposed",
    description="Reinforced procedural memory; a skill proposal's evidence (RaiseSkillProposal).",
    strict=False,
    scope="factory.evaluation.run",
)
DRAFT_RELEASE_OPENED = Subscription(
    topic=topics.DRAFT_RELEASE_OPENED,
    envelope=DraftReleaseOpenedMessage,
    title="DraftReleaseOpened",
    description="The agent registry opened the Draft release an accepted proposal asked for; "
    "its id becomes the proposal's resultingReleaseId (SPEC C32).",
    strict=False,
    # The release callback's scope (``POST /factory/learning/proposals/{id}/release``): the
    # event records the same fact, so a key without it cannot post the event either.
    scope="factory.assets.write",
)

SUBSCRIPTIONS = (
    EVALUATION_COMPLETED,
    DRIFT_DETECTED,
    SKILL_CANDIDATE_PROPOSED,
    DRAFT_RELEASE_OPENED,
)
