"""The fields of events that can hold text and are not sealed, each with the reason (D130).

Every field of an event class that can hold text (a string, a list, a dict, a record) is
either declared personal on its class (``Personal``: sealed under the key of the person it
belongs to, ``services.store.sealing``) or listed here with why it names nobody and holds
nobody's words. ``tests/unit/test_personal_fields.py`` enumerates every event class and fails
on a field that is neither, so a field added later is decided, not forgotten.

Nothing is left here as "not sealed yet": a field known to hold a person's words or id is
sealed, and the test refuses a list of exceptions (decisions D138).
"""

from collections.abc import Mapping

# Fields with one meaning in every event that has them.
EVERY_EVENT: Mapping[str, str] = {
    "tenant_id": "a tenant, not a person",
    "agent": "an agent's path: software, not a person",
    "agent_id": "an agent's path with '/' as '_' (SPEC W43)",
    "kind": "a closed kind (report, proposal, pass), chosen from a list",
    "category": "a report's category, from a closed list (SPEC W31)",
    "model": "a model's name, as the runtime reports it",
    "run_id": "a run's id, made by the agent's runtime",
    "run_ids": "runs' ids, made by the agent's runtime",
    "task_id": "a task's id, made by the service or the runtime",
    "dataset_id": "a dataset's id, made by the service",
    "case_id": "an eval case's id, made by the service",
    "item_id": "a digest item's id, made by the service",
    "week": "an ISO week",
    "status": "a state from a closed list",
    "outcome": "a verdict from a closed list",
    "error": "a delivery's HTTP error, written by the service",
    "ref": "where a case or night sits: agent path and service-made ids",
    "source": "the id of the report a case was lifted from",
    "command_id": "the command's idempotency key, a client's opaque token (D130)",
    "target_asset_id": "an agent's or asset's path",
    "target_kind": "a closed kind of asset",
    "target_version": "an asset's version",
    "repository": "a code repository's name (owner/name), where issues are filed",
    "label": "a task's appraisal label, from a closed list",
    "note": "a note the service writes (a night's or digest's status)",
    "summary_ref": "an artifact's content address (sha256), no text",
    "evidence_refs": "artifacts' content addresses (sha256), no text",
    "snapshot_ref": "an artifact's content address (sha256), no text",
    "input_ref": "an artifact's content address (sha256), no text",
    "expected_ref": "an artifact's content address (sha256), no text",
    "artifact_ref": "an artifact's content address (sha256), no text",
    "comment_ref": "an artifact's content address; the comment's text is an artifact, deleted "
    "at erasure (D43)",
    "corrected_artifact_ref": "an artifact's content address, deleted at erasure (D43)",
    "scoring_rule": "a scoring rule's name, from a closed list",
    "classification": "a data classification, from a closed list",
    "name": "a dataset's name, chosen by a curator for the tenant",
    "target": "a dataset's target agent",
    "to_tenant": "a tenant, not a person",
    "to_dataset_id": "a dataset's id, made by the service",
    "version": "an asset's version",
    "serves": "goals' refs: the tenant's goals, not a person",
    "keys": "data keys' ids: random, they name nobody",
    "trace_id": "a W3C trace id: random hex a tracing system made, naming nobody (D261)",
    "span_id": "a W3C span id: random hex a tracing system made, naming nobody (D261)",
    "gen_ai": "OpenTelemetry GenAI attributes from a closed list: a model provider's and a "
    "model's names and a response's id, made by software (D262)",
    "aggregates": "aggregates' ids: made by the service",
}

# Fields whose meaning is their event's own.
OF_EVENT: Mapping[str, Mapping[str, str]] = {
    # Decisions D191, D192: where an agent's notices go and the key they are signed with.
    "services.owners.domain:AgentWebhook.Subscribed": {
        "url": "an endpoint a maintainer set for the agent: a service's address (D192 refuses "
        "credentials in it)",
        "secret": "a signing key the service made at random (D191): it names nobody",
    },
    # Review queues (decisions D160): a queue's name is the tenant's label for a filter, the
    # filter an agent's path and closed kinds, categories, statuses and ages; who defined,
    # reviews or claims is sealed on the class (names).
    "services.queues.domain:ReviewQueue.Defined": {
        "queue": "a queue's name, chosen for the tenant, not a person",
        "filter": "an agent's path, closed kinds, categories and statuses, and ages in hours",
    },
    "services.queues.domain:ReviewQueue.Changed": {
        "filter": "an agent's path, closed kinds, categories and statuses, and ages in hours",
    },
    "services.queues.claims:ReportClaim.Opened": {
        "report_id": "a report's id, made by the service"
    },
    "services.queues.claims:ReportClaim.Claimed": {
        "queue": "a queue's name, chosen for the tenant, not a person",
    },
    "services.access.domain:ApiKey.Issued": {
        "sha256": "a digest of the key, not the key or its holder",
        "scopes": "scopes from a closed list",
    },
    "services.access.domain:RoleHolder.Granted": {"role": "a role from a closed list"},
    "services.access.domain:RoleHolder.Revoked": {"role": "a role from a closed list"},
    "services.access.sessions:ConsoleSession.Ended": {
        "session_id": "a console session's random id, made by the service at sign-in",
    },
    "services.appraisal.closure:TaskClosure.FollowUpStaged": {
        "follow_up_id": "an id the service makes",
        "channels": "channels from a closed list",
    },
    "services.appraisal.closure:TaskClosure.Noted": {"transition_id": "the runtime's id"},
    "services.appraisal.domain:TenantCharter.Adopted": {
        "document": "the tenant's charter: policy, not a person's own words (its writer is sealed)",
        "lines": "the charter's parsed lines",
        "findings": "what the parser found in the charter",
    },
    "services.appraisal.domain:TenantCharter.Amended": {
        "document": "the tenant's charter: policy, not a person's own words (its writer is sealed)",
        "lines": "the charter's parsed lines",
        "findings": "what the parser found in the charter",
    },
    "services.appraisal.owner_outcomes:DraftOutcomes.Opened": {"draft_id": "a draft's id"},
    "services.appraisal.owner_outcomes:DraftOutcomes.Recorded": {
        "draft_id": "a draft's id",
        "outcome_id": "an outcome's id",
        "verdict": "a verdict from a closed list",
        "commitment": "the id of a recorded commitment",
        "supersedes": "an outcome's id",
    },
    "services.appraisal.owner_outcomes:DraftOutcomes.Withdrawn": {
        "draft_id": "a draft's id",
        "outcome_id": "an outcome's id",
        "withdrawn": "an outcome's id",
    },
    "services.appraisal.pass_records:PaidPass.Recorded": {
        "results": "a model pass's scores over tasks",
    },
    "services.bus.command_bus:Receipt.Recorded": {
        "identity": "a SHA-256 digest of the caller, never the id (D42)",
        "command": "a command's type name",
        "digest": "a digest of the request",
    },
    "services.datasets.domain:Dataset.VersionPublished": {
        "request_key": "the request's idempotency key, a client's opaque token",
    },
    "services.datasets.domain:HarvestedRun.Harvested": {
        "run": "a completed run as the runtime reported it (contracts.neighbours.RunCompleted, "
        "unknown fields dropped on receipt): the runtime's ids, the agent's path, statuses, "
        "counts, check commands and artifacts' refs; it has no field for who asked, and the "
        "run's words are artifacts (SPEC C06) (D137)",
    },
    "services.datasets.domain:Validation.Recorded": {
        "validator": "a validator's name",
    },
    "services.digests.domain:Digest.Built": {"tables": "counts per agent and kind"},
    "services.digests.domain:Digest.AgentPosted": {
        "feedback_path": "where the digest item sits: service-made path",
        "message": "composed by the service from counts; the health line names a role, "
        "never a person (D135)",
        "extra_context": "composed by the service from counts",
        "url": "the service's link to the item",
        "previous_items": "earlier items' ids",
    },
    "services.digests.domain:Digest.Posted": {
        "routes": "where the digest went: agent paths",
        "identities": "the digest items' paths",
    },
    "services.digests.triage:TriageItem.Commented": {
        "issue_url": "the tracker's issue link",
        "comment_url": "the tracker's comment link",
    },
    "services.digests.triage:TriageItem.Filed": {"issue_url": "the tracker's issue link"},
    "services.digests.triage:TriageItem.Unrouted": {"finding": "a finding from a closed list"},
    "services.evals.comparison:Comparison.CaseCompared": {
        "side": "a comparison's side from a closed list (baseline, candidate)",
        "summary": "a run's scores",
        "reason": "why a case did not run: a reason from a closed list or the service's own "
        "error text",
    },
    "services.evals.comparison:Comparison.Opened": {
        "baseline": "a model's name (D180)",
        "candidate": "a model's name or an agent endpoint's URL, the operator's (D180)",
        "effort": "an effort level from a closed list",
        "case_ids": "eval cases' ids, made by the service",
    },
    "services.evals.domain:EvalCase.RunRecorded": {
        "effort": "an effort level from a closed list",
        "summary": "a run's scores",
        "night": "a night's id",
    },
    "services.feedback.domain:Feedback.Recorded": {
        "project_id": "a project's id",
        "subject_kind": "a closed kind",
        "request_digest": "a digest of the request",
        "given_as": "a role from a closed list",
    },
    "services.learning.evidence:Evidence.Recorded": {
        "item": "composed by the service from an evaluation, a drift or a skill candidate "
        "(SPEC C39–C41): neighbours' ids, gate and metric names, numbers, goal refs, an "
        "artifact's ref; feedback and reports are never recorded as Evidence (D137)",
    },
    "services.learning.domain:LearningProposal.Raised": {
        "evidence": "items the generator copies from the evidence clusters: ids, kinds, "
        "ratings, metrics, goal refs and a subject ref, left out where it holds its giver's "
        "id (projections.evidence_items.subject_shown, D137); a report's item names its kind",
        "evidence_hash": "a digest of the evidence ids",
        "profile": "a generator profile's name",
        "expected_effect": "numbers the generator expects to move",
    },
    "services.learning.domain:LearningProposal.ReleaseRecorded": {"release_id": "a release id"},
    "services.learning.domain:LearningProposal.Superseded": {"superseded_by": "a proposal's id"},
    "services.nightly.agent_changes:AgentChange.Recorded": {
        "what": "a closed kind: model, instructions or release (D240)",
        "before": "a model's name, an instructions version or a release id, as the registry "
        "says it (D240)",
        "after": "a model's name, an instructions version or a release id, as the registry "
        "says it (D240)",
        "changed_at": "a time",
    },
    "services.nightly.domain:Night.CaseFinished": {
        "line": "a case's outcome in the night: ids, scores, links, a reason from a closed list "
        "or the service's own error text, and what changed of its agent (models, versions, "
        "release ids, times: D242)",
    },
    "services.nightly.domain:Night.Finished": {"finished_at": "a time"},
    "services.nightly.domain:Night.Planned": {
        "date": "a night's date",
        "inputs": "what the night was planned from: ids and counts",
        "selected": "the cases' ids, and what changed of their agents (models, versions, "
        "release ids, times: D242)",
        "lines": "the plan's lines: case ids and reasons from a closed list, and what changed "
        "of their agents (D242)",
    },
    "services.reports.domain:Report.KindCorrected": {
        "addressee": "a role from a closed list (contracts.annotations.AddresseeRole, D171)",
    },
    "services.reports.domain:Report.Tagged": {
        "tag": "a label of the tenant's vocabulary, one hyphenated lowercase word form of at "
        "most 40 characters (contracts.scalars.Tag): a way to file reports, not a person's "
        "words (D172)",
    },
    "services.privacy.domain:Erasure.PersonErased": {
        "person_digest": "a SHA-256 digest of tenant and person, never the id (D43)",
    },
    "services.privacy.domain:Expiry.TextExpired": {"before": "a month"},
}
