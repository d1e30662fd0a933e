"""The relay picks each message's partition itself (it sends record batches per
partition): it must pick the one aiokafka's own ``send()`` would, so one aggregate's events
keep landing in one partition, where they always did. It hashes a page's keys at once with
its own murmur2 (``services.kafka.murmur2``), held here to aiokafka's on arbitrary bytes."""

from uuid import UUID

from aiokafka.partitioner import DefaultPartitioner, murmur2
from hypothesis import given, settings
from hypothesis import strategies as st

from services.kafka.murmur2 import FEWEST_FOR_LANES, murmur2_each, murmur2_in_lanes
from services.kafka.partitioner import partition_of
from services.kafka.publication import key_of

AIOKAFKA = DefaultPartitioner()


@given(st.lists(st.uuids(), max_size=40), st.integers(1, 64))
def test_an_aggregate_goes_to_the_partition_aiokafka_s_send_picks(
    aggregates: list[UUID], count: int
) -> None:
    keys = [key_of(aggregate) for aggregate in aggregates]
    assert keys == [str(aggregate).encode() for aggregate in aggregates]
    partitions = list(range(count))
    assert [partition_of(h, partitions) for h in murmur2_each(keys)] == [
        AIOKAFKA(key, partitions, partitions) for key in keys
    ]


def test_a_key_is_the_aggregate_id_s_text() -> None:
    """orjson writes the key of a UUID: the text ``str`` gives, at its edges too."""
    for aggregate in (UUID(int=0), UUID(int=2**128 - 1), UUID(int=2**127 + 5)):
        assert key_of(aggregate) == str(aggregate).encode()
    assert key_of("not-a-uuid/ü") == "not-a-uuid/ü".encode()


@settings(max_examples=300)
@given(st.lists(st.binary(max_size=13), max_size=120))
def test_the_murmur2_of_any_keys_is_aiokafka_s(keys: list[bytes]) -> None:
    """Short keys of mixed lengths: many lengths have enough keys to be hashed side by side,
    some too few (aiokafka's own function), and the order of the page is kept."""
    assert murmur2_each(keys) == [murmur2(key) for key in keys]


@settings(max_examples=300)
@given(st.integers(0, 70).flatmap(lambda n: st.lists(st.binary(min_size=n, max_size=n))))
def test_keys_of_one_length_hashed_side_by_side_are_aiokafka_s(keys: list[bytes]) -> None:
    """Every length (whole words and 1-3 bytes over), one key or many: no lane spills into
    the next."""
    assert list(murmur2_in_lanes(keys)) == [murmur2(key) for key in keys]


def test_extreme_words_keep_to_their_lanes() -> None:
    """All-ones and all-zero words next to each other: the largest products and shifts."""
    keys = [b"\xff" * 37, bytes(37), b"\xff" * 37, b"\x80" * 37, bytes(37)] * FEWEST_FOR_LANES
    assert murmur2_each(keys) == [murmur2(key) for key in keys]
    assert list(murmur2_in_lanes(keys)) == [murmur2(key) for key in keys]
