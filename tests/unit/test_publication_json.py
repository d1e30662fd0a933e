"""A publication's own payload writer (``Publication.payload_writer``) gives the bytes the contract
built and dumped by pydantic gives, or leaves the event to it: the same
CloudEvent, or the same refusal (which parks the event), on any values an event may hold,
hostile ones included."""

import dataclasses
import uuid
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from contracts.feedback import FeedbackKind, SubjectKind
from services.feedback.published import RECORDED, feedback_recorded_json
from services.kafka.publication import Publication, structured_cloudevent

VALIDATED = dataclasses.replace(RECORDED, payload_writer=None)  # the contract's way only

TEXT = st.text(max_size=30) | st.sampled_from(["", "\x00", "a\x00b", "\ud800", "\x7f\u2028"])
KINDS = st.sampled_from([k.value for k in SubjectKind]) | st.sampled_from(list(SubjectKind))
FEEDBACK = st.sampled_from([k.value for k in FeedbackKind]) | st.sampled_from(list(FeedbackKind))
ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    TEXT,
    st.uuids(),
    st.lists(st.integers(), max_size=2),
)


def outcome(publication: Publication, event: Any) -> tuple[str, Any]:
    try:
        return "value", structured_cloudevent(publication, event, "urn:t", str(event.originator_id))
    except Exception as error:
        return "error", (type(error), str(error))


def recorded(**fields: Any) -> Any:
    """A decoded Feedback.Recorded as a reader holds it: its attributes, whatever they are."""
    base = {
        "originator_id": uuid.uuid4(),
        "originator_version": 1,
        "timestamp": datetime(2026, 12, 1, tzinfo=UTC),
        "tenant_id": "t1",
        "subject_kind": "run",
        "subject_ref": "run-1",
        "kind": "rating",
        "rating": 4,
    }
    return SimpleNamespace(**(base | fields))


@settings(max_examples=500, deadline=None)
@given(
    feedback_id=st.uuids() | ODD,
    tenant=TEXT | ODD,
    subject_kind=KINDS | TEXT | ODD,
    subject_ref=TEXT | ODD,
    kind=FEEDBACK | TEXT | ODD,
    rating=st.none() | st.integers(-(2**65), 2**65) | ODD,
)
def test_the_payload_written_alone_is_the_contract_s_own(
    feedback_id: Any, tenant: Any, subject_kind: Any, subject_ref: Any, kind: Any, rating: Any
) -> None:
    """SPEC C10: FeedbackRecorded on Kafka, byte for byte as the contract writes it."""
    event = recorded(
        originator_id=feedback_id,
        tenant_id=tenant,
        subject_kind=subject_kind,
        subject_ref=subject_ref,
        kind=kind,
        rating=rating,
    )
    assert outcome(RECORDED, event) == outcome(VALIDATED, event)


@settings(max_examples=300, deadline=None)
@given(
    tenant=st.text(min_size=1, max_size=40),
    subject_ref=st.text(min_size=1, max_size=60),
    subject_kind=st.sampled_from([k.value for k in SubjectKind]),
    kind=st.sampled_from([k.value for k in FeedbackKind]),
    rating=st.none() | st.integers(-(2**63), 2**63 - 1),
)
def test_plain_values_are_written_alone(
    tenant: str, subject_ref: str, subject_kind: str, kind: str, rating: int | None
) -> None:
    """The fast way is taken for every value an accepted command leaves (no NUL, no lone
    surrogate: the door refuses them), and gives the contract's bytes."""
    clean = all("\x00" not in t and not any(0xD800 <= ord(c) < 0xE000 for c in t)
                for t in (tenant, subject_ref))  # fmt: skip
    event = recorded(
        tenant_id=tenant,
        subject_kind=subject_kind,
        subject_ref=subject_ref,
        kind=kind,
        rating=rating,
    )
    written = feedback_recorded_json(event)
    assert (written is not None) == clean
    if written is not None:
        contract = RECORDED.to_contract(event).model_dump_json(by_alias=True)
        assert written == contract.encode()
    assert outcome(RECORDED, event) == outcome(VALIDATED, event)


def test_odd_values_are_left_to_the_contract() -> None:
    for odd in (
        {"rating": True},
        {"rating": 4.0},
        {"rating": 2**63},
        {"subject_kind": SubjectKind.run},
        {"subject_kind": "nothing"},
        {"tenant_id": "a\x00b"},
        {"originator_id": str(uuid.uuid4())},
    ):
        assert feedback_recorded_json(recorded(**odd)) is None, odd


def test_a_writer_stands_for_its_own_mapping_only() -> None:
    """Another mapping (a test's, a fix's) is built and dumped as declared, never bypassed."""
    event = recorded()
    calls: list[Any] = []

    def mapping(e: Any) -> Any:
        calls.append(e)
        return RECORDED.to_contract(e)

    assert outcome(dataclasses.replace(RECORDED, to_contract=mapping), event) == outcome(
        RECORDED, event
    )
    assert calls == [event]
