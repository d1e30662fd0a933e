"""What of others a person's export carries (decisions D136): a role, never an id; never
another person's words."""

from datetime import UTC, datetime
from uuid import uuid4

import pytest

from services.privacy.holdings import (
    ANOTHER_PERSONS_WORDS,
    as_json,
    others_as_roles,
    withhold_others,
)
from services.reports.domain import Report
from services.store.event_store import EventStore
from services.store.sealing import personal_of

pytestmark = pytest.mark.unit
AT = datetime(2026, 11, 27, 9, tzinfo=UTC)


def test_another_person_named_is_shown_by_the_role_and_the_person_themself_by_id() -> None:
    fields = {"maintainers": ["pat", "kim"], "registered_by": "root", "agent": "A/B"}
    others_as_roles(
        fields, {"maintainers": "AgentMaintainer", "registered_by": "PlatformAdmin"}, "pat"
    )
    assert fields == {
        "maintainers": ["pat", "AgentMaintainer"], "registered_by": "PlatformAdmin", "agent": "A/B",
    }  # fmt: skip


def test_a_review_shows_its_reviewer_as_reviewer_in_the_reporter_s_export() -> None:
    fields = {"reviewed_by": "pat", "change": None, "link": "https://example.org/1"}
    declared = personal_of(Report.Resolved)
    assert declared is not None
    others_as_roles(fields, declared.names, "kim")
    assert fields["reviewed_by"] == "Reviewer"


def test_words_sealed_under_another_person_s_key_are_withheld() -> None:
    """The reviewer's export of a resolution on kim's report: the text is under kim's key."""
    store = EventStore(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    report = uuid4()
    kim = store.data_keys.key_for("t1", "kim", "2026-11")
    store.data_keys.bind(report, kim.key_id)
    event = Report.Resolved(
        originator_id=report, originator_version=4, timestamp=AT, reviewed_by="pat",
        change="kim's words", link=None, tenant_id="t1",
    )  # fmt: skip
    stored = store.mapper.to_stored_event(event)
    fields = as_json({"reviewed_by": "pat", "change": "kim's words", "link": None})
    declared = personal_of(Report.Resolved)
    assert declared is not None
    pat = {str(k) for k in store.data_keys.person_keys("t1", "pat")}
    assert pat  # the reviewer's own key seals their id
    withhold_others(fields, store.mapper.transcoder.decode(stored.state), declared, pat)
    assert fields == {"reviewed_by": "pat", "change": ANOTHER_PERSONS_WORDS, "link": None}
