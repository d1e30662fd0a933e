"""What the command bus builds for itself, held equal to the plain way of building it."""

from dataclasses import fields, replace
from datetime import UTC, datetime

import pytest
from eventsourcing.persistence import Tracking

from contracts.feedback import RecordFeedback
from services.bus import Issued, as_new

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
    """Issue 12: ``as_new`` stands for ``replace(issued, new=True)``; field for field the same,
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
