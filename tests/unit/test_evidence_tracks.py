"""Evidence items and tracks, and the consent service's configuration: pure rules (SPEC C17,
C27, C28, C40, C43; decisions D55, D56)."""

from datetime import UTC, datetime
from types import SimpleNamespace
from uuid import uuid4

import pytest

from contracts.learning import EvidenceItem, ProposalKind
from projections.evidence_items import (
    GIVERS_REF,
    feedback_item,
    report_item,
    says_wrong,
    subject_key,
    track_of,
)
from services.datasets.consent import (
    URL,
    URLS,
    ConsentUnavailable,
    MemoryPromotionConsent,
    consent_service_for,
)
from services.learning.clusters import (
    DATASET_ADDITION,
    IMPROVEMENT,
    RE_EVALUATION,
    Fact,
    clusters,
    evidence_hash,
)

AT = datetime(2026, 11, 30, 6, tzinfo=UTC)


def fact(n: int) -> Fact:
    item = EvidenceItem.model_validate(
        {"evidenceId": f"drift:d-{n}", "origin": "drift", "observedAt": AT.isoformat()}
    )
    return Fact("t", "agent-1", "agent", "v1", item)


def test_the_improvement_hash_is_unchanged_and_another_track_names_its_own() -> None:  # C43
    ids = ["drift:d-1", "drift:d-0"]
    assert evidence_hash(ids) == evidence_hash(ids, IMPROVEMENT)
    assert evidence_hash(ids, RE_EVALUATION) != evidence_hash(ids)
    assert evidence_hash(ids, RE_EVALUATION) != evidence_hash(ids, DATASET_ADDITION)


def test_a_track_gives_its_kind_and_drift_alone_on_improvement_a_threshold_change() -> None:
    facts = [fact(n) for n in range(3)]
    [improvement] = clusters(facts, [])
    [re_evaluation] = clusters(facts, [], RE_EVALUATION)
    [addition] = clusters(facts, [], DATASET_ADDITION)
    assert improvement.kind == ProposalKind.threshold_change
    assert re_evaluation.kind == ProposalKind.re_evaluation  # C40
    assert addition.kind == ProposalKind.dataset_addition  # C27
    assert len({improvement.evidence_hash, re_evaluation.evidence_hash}) == 2
    assert [track_of(k) for k in ("re-evaluation", "dataset-addition", "prompt-improvement")] == [
        RE_EVALUATION, DATASET_ADDITION, IMPROVEMENT,
    ]  # fmt: skip


def feedback(kind: str, rating: int | None = None, **more: object) -> SimpleNamespace:
    fields = {"originator_id": uuid4(), "kind": kind, "rating": rating, "subject_kind": "run",
              "subject_ref": "run-1", "corrected_artifact_ref": None, "timestamp": AT}  # fmt: skip
    return SimpleNamespace(**(fields | more))


def test_feedback_is_evidence_when_it_says_something_is_wrong() -> None:  # C28
    assert says_wrong(feedback("correction"))
    assert says_wrong(feedback("escalation"))
    assert says_wrong(feedback("rating", 2))
    assert not says_wrong(feedback("rating", 3))
    assert not says_wrong(feedback("comment"))
    item = EvidenceItem.model_validate(feedback_item(feedback("rating", 1)))
    assert item.note == "rating 1 on run run-1"


def test_a_subject_ref_naming_its_giver_is_left_out_of_the_evidence_note() -> None:
    """Decisions D137: the ref is sealed under the giver's key in the log; the note, copied
    into a proposal's evidence (which no erasure reaches), says what it was instead."""
    named = feedback("rating", 1, subject_ref="pat-4f1c/_Thread/1", given_by="pat-4f1c")
    assert feedback_item(named)["note"] == f"rating 1 on run {GIVERS_REF}"
    mine = feedback("rating", 1, given_by="pat-4f1c")
    assert feedback_item(mine)["note"] == "rating 1 on run run-1"
    # Once the giver is erased, both read as the same ``erased:<key>``: the note stays.
    gone = feedback("rating", 1, subject_ref="erased:0123456789ab", given_by="erased:0123456789ab")
    assert feedback_item(gone)["note"] == f"rating 1 on run {GIVERS_REF}"


def test_a_reports_evidence_note_names_a_known_kind_never_the_reporters_own_words() -> None:
    """Decisions D137: an unknown ``Kind:`` is kept as the reporter wrote it (SPEC §3.4)."""
    report = SimpleNamespace(originator_id=uuid4(), timestamp=AT)
    assert report_item(report, "Fabricated")["note"] == "wrong-answer report (fabricated)"
    assert report_item(report, "pat-4f1c says")["note"] == "wrong-answer report (an unknown kind)"
    assert report_item(report, None)["note"] == "wrong-answer report (no kind)"


def test_an_attempt_is_looked_up_by_its_run_every_other_subject_by_itself() -> None:  # D55
    assert subject_key("attempt", "run-7#3") == ("run", "run-7")
    assert subject_key("attempt", "run-7") == ("run", "run-7")
    assert subject_key("artifact", "urn:a#b") == ("artifact", "urn:a#b")


def test_the_consent_service_is_the_tenant_s_else_the_instance_s_else_none() -> None:  # D56
    assert consent_service_for({}, "t") is None
    assert consent_service_for({URL: " http://i "}, "t") == MemoryPromotionConsent("http://i")
    per_tenant = {URL: "http://i", URLS: '{"t": "http://t"}'}
    assert consent_service_for(per_tenant, "t") == MemoryPromotionConsent("http://t")
    assert consent_service_for(per_tenant, "u") == MemoryPromotionConsent("http://i")


async def test_a_per_tenant_table_that_does_not_parse_refuses_rather_than_trust_local() -> None:
    service = consent_service_for({URLS: "{not json"}, "t")
    assert service is not None
    with pytest.raises(ConsentUnavailable, match=URLS):
        await service.check(tenant_id="t", dataset_id="d", version=1, to_tenant="u")
