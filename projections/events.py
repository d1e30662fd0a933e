"""The events the read models read, named by the topic stored with each of them.

A read model names an event by its topic (the eventsourcing topic, ``module:Class.Event``),
never by its class: the classes live in the contexts, and the contexts read the read models'
queries, so importing them here would make a loop. The topic is what the store keeps with every
event, so it cannot change while events stored under it exist; ``tests/unit/test_read_model_topics``
checks that each one still names an event class.

``topic_of`` gives an event's topic for ``apply`` to dispatch on: looked up once per class, a
dictionary read for every event after that (a rebuild dispatches every event of the log).
"""

from eventsourcing.utils import get_topic

FEEDBACK_RECORDED = "services.feedback.domain:Feedback.Recorded"

REPORT_DRAFTED = "services.reports.domain:Report.Drafted"
REPORT_SUBMITTED = "services.reports.domain:Report.Submitted"
REPORT_HANDED_OVER = "services.reports.domain:Report.HandedOver"
REPORT_TRIAGED = "services.reports.domain:Report.Triaged"
REPORT_RESOLVED = "services.reports.domain:Report.Resolved"
REPORT_WONT_FIX = "services.reports.domain:Report.WontFix"
REPORT_DELIVERY_ATTEMPTED = "services.reports.domain:Report.HandOverDeliveryAttempted"
REPORT_DELIVERY_FAILED = "services.reports.domain:Report.HandOverDeliveryFailed"
REPORT_KIND_CORRECTED = "services.reports.domain:Report.KindCorrected"
REPORT_TAGGED = "services.reports.domain:Report.Tagged"
REPORT_NOTE_ADDED = "services.reports.domain:Report.NoteAdded"

CASE_LIFTED = "services.evals.domain:EvalCase.Lifted"
CASE_PATCHED = "services.evals.domain:EvalCase.Patched"
CASE_CONFIRMED = "services.evals.domain:EvalCase.Confirmed"
CASE_UNCONFIRMED = "services.evals.domain:EvalCase.Unconfirmed"
CASE_RUN_RECORDED = "services.evals.domain:EvalCase.RunRecorded"

DIGEST_BUILT = "services.digests.domain:Digest.Built"
DIGEST_POSTED = "services.digests.domain:Digest.Posted"
DIGEST_DELIVERY_ATTEMPTED = "services.digests.domain:Digest.DeliveryAttempted"
TRIAGE_FILED = "services.digests.triage:TriageItem.Filed"
TRIAGE_COMMENTED = "services.digests.triage:TriageItem.Commented"
TRIAGE_UNROUTED = "services.digests.triage:TriageItem.Unrouted"

NIGHT_PLANNED = "services.nightly.domain:Night.Planned"
NIGHT_CONVERSATION_RECORDED = "services.nightly.domain:Night.ConversationRecorded"
NIGHT_CASE_FINISHED = "services.nightly.domain:Night.CaseFinished"
NIGHT_FINISHED = "services.nightly.domain:Night.Finished"
AGENT_CHANGE_RECORDED = "services.nightly.agent_changes:AgentChange.Recorded"

EVIDENCE_RECORDED = "services.learning.evidence:Evidence.Recorded"
PROPOSAL_RAISED = "services.learning.domain:LearningProposal.Raised"
PROPOSAL_PICKED_UP = "services.learning.domain:LearningProposal.PickedUp"
PROPOSAL_ACCEPTED = "services.learning.domain:LearningProposal.Accepted"
PROPOSAL_APPROVED = "services.learning.domain:LearningProposal.ApprovedForRelease"
PROPOSAL_REJECTED = "services.learning.domain:LearningProposal.Rejected"
PROPOSAL_SUPERSEDED = "services.learning.domain:LearningProposal.Superseded"
PROPOSAL_RELEASE_RECORDED = "services.learning.domain:LearningProposal.ReleaseRecorded"

RUN_HARVESTED = "services.datasets.domain:HarvestedRun.Harvested"
VALIDATION_RECORDED = "services.datasets.domain:Validation.Recorded"
DATASET_OPENED = "services.datasets.domain:Dataset.Opened"
DATASET_TASK_CURATED = "services.datasets.domain:Dataset.TaskCurated"
DATASET_TASK_REMOVED = "services.datasets.domain:Dataset.TaskRemoved"
DATASET_VERSION_PUBLISHED = "services.datasets.domain:Dataset.VersionPublished"
DATASET_SHARE_CONSENTED = "services.datasets.domain:Dataset.ShareConsentRecorded"
DATASET_VERSION_SHARED = "services.datasets.domain:Dataset.VersionShared"

CHARTER_ADOPTED = "services.appraisal.domain:TenantCharter.Adopted"
CHARTER_AMENDED = "services.appraisal.domain:TenantCharter.Amended"
OWNER_OUTCOME_RECORDED = "services.appraisal.owner_outcomes:DraftOutcomes.Recorded"
OWNER_OUTCOME_WITHDRAWN = "services.appraisal.owner_outcomes:DraftOutcomes.Withdrawn"
PASS_RECORDED = "services.appraisal.pass_records:PaidPass.Recorded"
CLOSURE_NOTED = "services.appraisal.closure:TaskClosure.Noted"
CLOSURE_APPRAISED = "services.appraisal.closure:TaskClosure.Appraised"

AGENT_REGISTERED = "services.permissions.agent_register:AgentRegistration.Registered"
AGENT_MAINTAINERS_REPLACED = (
    "services.permissions.agent_register:AgentRegistration.MaintainersReplaced"
)
AGENT_REPOSITORY_NAMED = "services.permissions.agent_register:AgentRegistration.RepositoryNamed"

KEY_ISSUED = "services.access.domain:ApiKey.Issued"
KEY_REVOKED = "services.access.domain:ApiKey.Revoked"
ROLE_GRANTED = "services.access.domain:RoleHolder.Granted"
ROLE_REVOKED = "services.access.domain:RoleHolder.Revoked"
CONSOLE_SESSION_ENDED = "services.access.sessions:ConsoleSession.Ended"
CONSOLE_SESSIONS_ALL_ENDED = "services.access.sessions:PersonsSessions.AllEnded"

QUEUE_DEFINED = "services.queues.domain:ReviewQueue.Defined"
QUEUE_CHANGED = "services.queues.domain:ReviewQueue.Changed"
QUEUE_REMOVED = "services.queues.domain:ReviewQueue.Removed"
CLAIM_OPENED = "services.queues.claims:ReportClaim.Opened"
REPORT_CLAIMED = "services.queues.claims:ReportClaim.Claimed"
CLAIM_RELEASED = "services.queues.claims:ReportClaim.Released"

# Every topic above: what a test resolves.
READ: tuple[str, ...] = tuple(v for k, v in dict(globals()).items() if k.isupper() and k != "READ")

_TOPICS: dict[type, str] = {}


def topic_of(event: object) -> str:
    """The topic stored with ``event``: its class's, found once per class."""
    cls = type(event)
    topic = _TOPICS.get(cls)
    if topic is None:
        topic = _TOPICS[cls] = get_topic(cls)
    return topic


def topics(named: tuple[str | type, ...]) -> tuple[str, ...]:
    """Events named by topic or (a test's own event classes) by class, as topics."""
    return tuple(name if isinstance(name, str) else get_topic(name) for name in named)
