"""Kafka topic names: ``evaluation.<area>.v1.<event-name>``.

The published ones keep the names of the service this one stands in for, exactly as written.
"""

FEEDBACK_RECORDED = "evaluation.feedback.v1.feedback-recorded"
RECORD_FEEDBACK = "evaluation.feedback.v1.record-feedback"
# v2: a report's text travels by reference, never in the clear (decisions D74); v1 carried
# the message and extra context and is no longer published.
FEEDBACK_HANDED_OVER = "evaluation.feedback.v2.feedback-handed-over"
AGENT_OWNER_NOTIFIED = "evaluation.feedback.v1.agent-owner-notified"
# The reporter hears back (W33, D51). v2: by reference, naming nobody (decisions D139); v1
# carried the reporter's id and the review's words and is no longer published.
REPORT_RESOLVED = "evaluation.feedback.v2.report-resolved"
EVAL_CASE_LIFTED = "evaluation.evals.v1.case-lifted"
# v2: the confirmer by role, the case by reference (decisions D139); v1 carried the
# confirmer's id and is no longer published.
EVAL_CASE_CONFIRMED = "evaluation.evals.v2.case-confirmed"
EVAL_RUN_COMPLETED = "evaluation.evals.v1.run-completed"
# One per agent and week (SPEC W123). v2: the health line's `withRun` and `passed` are the
# night's figure alone (decisions D53, D151); v1 counted every runner's newest run and is no
# longer published.
DIGEST_POSTED = "evaluation.feedback.v2.digest-posted"
DATASET_PUBLISHED = "evaluation.datasets.v1.dataset-published"  # SPEC C23, as the seed writes it
LEARNING_PROPOSAL_RAISED = "evaluation.learning.v1.learning-proposal-raised"  # SPEC C37
LEARNING_PROPOSAL_DECIDED = "evaluation.learning.v1.learning-proposal-decided"  # SPEC C38
DRAFT_RELEASE_REQUESTED = "evaluation.learning.v1.draft-release-requested"  # SPEC C32, for BC-04
# A follow-up task staged by a closure appraisal, for the task system to take (SPEC M45, M46).
FOLLOW_UP_STAGED = "evaluation.appraisal.v1.follow-up-staged"
PERSON_ERASED = "evaluation.privacy.v1.person-erased"  # decisions D44


# Other services' events (``contracts.neighbours``): their owners name these topics.
RUN_COMPLETED = "factory.runs.v1.run-completed"
ARTIFACT_VALIDATED = "factory.artifacts.v1.artifact-validated"
EVALUATION_COMPLETED = "factory.quality.v1.evaluation-completed"
DRIFT_DETECTED = "factory.quality.v1.drift-detected"
SKILL_CANDIDATE_PROPOSED = "factory.memory.v1.skill-candidate-proposed"
# The agent registry's answer to a DraftReleaseRequested (SPEC C32).
DRAFT_RELEASE_OPENED = "factory.registry.v1.draft-release-opened"
# An agent's model, instructions or release changed: its cases are re-run first (D240).
AGENT_CHANGED = "factory.registry.v1.agent-changed"
# The agents' runtime and the task system, as appraisal reads them (SPEC M33, M45).
OWNER_OUTCOME_RECORDED = "factory.agents.v1.owner-outcome-recorded"
TASK_CLOSED = "factory.tasks.v1.task-closed"
NEIGHBOURS = (
    AGENT_CHANGED,  # read by the nightly context, declared before the others
    RUN_COMPLETED,
    ARTIFACT_VALIDATED,
    EVALUATION_COMPLETED,
    DRIFT_DETECTED,
    SKILL_CANDIDATE_PROPOSED,
    DRAFT_RELEASE_OPENED,
    OWNER_OUTCOME_RECORDED,
    TASK_CLOSED,
)


def dead_letter(topic: str) -> str:
    """Where a message that cannot be parsed or is refused goes, with the reason."""
    return f"{topic}.dlt"


# The topics our consumers read: commands sent to us, and our neighbours' events. What we
# publish is declared with each event in its context's ``published.py``;
# ``services.processes.published.TOPICS`` is every topic.
CONSUMED = (RECORD_FEEDBACK, *NEIGHBOURS)
