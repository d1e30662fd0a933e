"""The relay's shares (decisions D270–D272): every event falls in exactly one share of a
layout, an aggregate always in the same one, and with N dividing the partitions a share is a
set of whole partitions."""

from uuid import UUID

import pytest
from aiokafka.partitioner import DefaultPartitioner
from eventsourcing.persistence import Notification
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from services.kafka.publication import key_of
from services.kafka.relay import Relay
from services.kafka.shares import WHOLE, Share
from services.processes.settings import Settings

AIOKAFKA = DefaultPartitioner()


def notification(position: int, aggregate: UUID) -> Notification:
    return Notification(
        id=position, originator_id=aggregate, originator_version=1, topic="t", state=b""
    )


@given(st.lists(st.uuids(), max_size=60), st.integers(1, 8))
def test_every_event_falls_in_exactly_one_share_in_log_order(
    aggregates: list[UUID], count: int
) -> None:
    page = [notification(i + 1, a) for i, a in enumerate(aggregates)]
    selected = [Share(i, count).select(page) for i in range(1, count + 1)]
    assert sorted(n.id for share in selected for n in share) == [n.id for n in page]
    for share in selected:
        assert [n.id for n in share] == sorted(n.id for n in share)
        for n in share:  # every event of an aggregate in one share
            assert all(m in share for m in page if m.originator_id == n.originator_id)


@given(st.lists(st.uuids(), max_size=60), st.sampled_from([(2, 6), (3, 6), (6, 6), (4, 12)]))
def test_with_n_dividing_the_partitions_a_share_is_its_partitions_modulo_n(
    aggregates: list[UUID], layout: tuple[int, int]
) -> None:
    count, partitions = layout
    every = list(range(partitions))
    for i in range(1, count + 1):
        for n in Share(i, count).select([notification(1, a) for a in aggregates]):
            key = key_of(n.originator_id)
            assert AIOKAFKA(key, every, every) % count == i - 1


def test_a_share_is_written_i_of_n_and_names_its_reader() -> None:
    assert Share.parse(" 2 / 3 ") == Share(2, 3)
    assert Share(2, 3).name == "relay-2of3"
    assert Share.parse("1/1").name == "relay"  # the reader of old, unchanged (D271)
    assert Share(1, 2).names() == ["relay-1of2", "relay-2of2"]
    for wrong in ("0/2", "3/2", "2", "a/b", "1/0", ""):
        with pytest.raises(ValueError, match="I/N"):
            Share.parse(wrong)


def test_the_whole_log_is_still_the_relay_reader_of_old() -> None:
    """D271: 1/1 is the reader ``relay``, reading every event of a page (nothing selected)."""
    relay = Relay("localhost:9092", [], source="urn:x")
    assert (relay.name, relay.share, relay.select) == ("relay", WHOLE, None)


def test_a_share_that_is_no_i_of_n_stops_the_start_naming_the_setting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FEEDBACKLOOP_RELAY_SHARE", "3/2")
    with pytest.raises(ValidationError, match="relay_share"):
        Settings()
    monkeypatch.setenv("FEEDBACKLOOP_RELAY_SHARE", "2/2")
    assert Settings().relay_share == "2/2"
