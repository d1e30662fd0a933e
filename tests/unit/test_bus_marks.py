"""What the command bus builds for itself, held equal to the plain way of building it."""

from dataclasses import fields, replace
from datetime import UTC, datetime
from typing import Any
from uuid import uuid5

import pytest
from eventsourcing.persistence import Tracking
from hypothesis import example, given, settings
from hypothesis import strategies as st

from contracts.feedback import RecordFeedback
from services.bus.command_bus import RECEIPT_TOPIC, Receipt
from services.bus.fast_marking import as_new
from services.bus.issued import Issued
from services.bus.receipts import RECEIPT_NAMESPACE, receipt_id
from services.feedback.domain import (
    FEEDBACK_NAMESPACE,
    FEEDBACK_TOPIC,
    Feedback,
    feedback_id_for,
    recorded_fields,
)

COMMAND = RecordFeedback.model_validate(
    {"projectId": "p1", "subjectKind": "run", "subjectRef": "run-1", "kind": "rating", "rating": 2}
)
AT = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "issued",
    [
        Issued(COMMAND, "t1", "alice", "c1", AT),
        Issued(
            COMMAND,
            "t1",
            "svc",
            "ce/urn:x/1",
            AT,
            tracking=Tracking("topic:0", 7),
            identity='["urn:x", "1"]',
            trace="00-" + "a" * 32 + "-" + "b" * 16 + "-01",
            service=True,
            digest="d" * 64,
        ),
    ],
)
def test_a_command_marked_new_is_what_replace_makes(issued: Issued) -> None:
    """``as_new`` stands for ``replace(issued, new=True)``; field for field the same,
    a new object, and the original left unmarked (the redo path decides it again unmarked)."""
    marked = as_new(issued)
    assert marked == replace(issued, new=True)
    assert [getattr(marked, f.name) for f in fields(Issued)] == [
        getattr(replace(issued, new=True), f.name) for f in fields(Issued)
    ]
    assert marked is not issued
    assert marked.new
    assert not issued.new
    assert type(marked) is Issued


@settings(max_examples=300)
@given(st.text())
@example("")
@example('["urn:x", "ünï ☃ \U0001f600"]')
def test_a_receipt_id_is_the_uuid5_of_its_identity(identity: str) -> None:
    """``receipt_id`` spells ``uuid5`` with the namespace's bytes read once; for
    any identity it is the very id ``uuid5`` derives (receipts stored before find theirs)."""
    try:
        expected = uuid5(RECEIPT_NAMESPACE, identity)
    except UnicodeEncodeError:  # a lone surrogate: both refuse it
        with pytest.raises(UnicodeEncodeError):
            receipt_id(identity)
        return
    assert receipt_id(identity) == expected
    assert receipt_id(identity).version == 5


@settings(max_examples=300)
@given(st.text(max_size=20), st.text(max_size=40))
def test_a_feedback_id_is_the_uuid5_of_its_key(tenant_id: str, key: str) -> None:
    """SPEC C11: the same key names the same feedback as it always did (``uuid5``)."""
    try:
        expected = uuid5(FEEDBACK_NAMESPACE, f"{tenant_id}/{key}")
    except UnicodeEncodeError:
        with pytest.raises(UnicodeEncodeError):
            feedback_id_for(tenant_id, key)
        return
    assert feedback_id_for(tenant_id, key) == expected


def same_event(built: Any, made: Any) -> None:
    """Equal, of the same class, with the same fields in the same order (a stored event
    writes them in its ``__dict__``'s order)."""
    assert type(built) is type(made)
    assert built == made
    assert list(vars(built).items()) == list(vars(made).items())


@pytest.mark.parametrize("digest", [None, "d" * 64])
def test_a_receipt_event_is_what_its_dataclass_init_makes(digest: str | None) -> None:
    """``Receipt.recorded`` fills the event without its frozen dataclass
    ``__init__``; field for field, in order, it is the event that ``__init__`` makes."""
    identity = '["urn:x", "1"]'
    made = Receipt.Recorded(  # type: ignore[call-arg]
        originator_id=receipt_id(identity),
        originator_version=1,
        timestamp=AT,
        originator_topic=RECEIPT_TOPIC,
        identity=identity,
        command="RecordFeedback",
        digest=digest,
    )
    same_event(Receipt.recorded(identity, "RecordFeedback", AT, digest), made)


@pytest.mark.parametrize(
    "body",
    [
        {"kind": "rating", "rating": 4},
        {"kind": "comment", "commentRef": "artifact://c/1", "serves": ["task:t-1"]},
        {"kind": "correction", "correctedArtifactRef": "artifact://a/2"},
    ],
)
def test_a_feedback_event_is_what_its_dataclass_init_makes(body: dict[str, Any]) -> None:
    """SPEC C01: ``Feedback.recorded`` likewise, for each kind of feedback."""
    command = RecordFeedback.model_validate(
        {"projectId": "p1", "subjectKind": "run", "subjectRef": "run-1"} | body
    )
    feedback_id = feedback_id_for("t1", "alice/c1")
    fields = recorded_fields(command, "t1", "alice", "c1", "d" * 64)
    made = Feedback.Recorded(
        originator_id=feedback_id,
        originator_version=Feedback.INITIAL_VERSION,
        timestamp=AT,
        originator_topic=FEEDBACK_TOPIC,
        **fields,
    )
    built = Feedback.recorded(
        command,
        feedback_id=feedback_id,
        tenant_id="t1",
        given_by="alice",
        given_at=AT,
        command_id="c1",
        request_digest="d" * 64,
    )
    same_event(built, made)
