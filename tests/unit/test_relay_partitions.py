"""The relay picks each message's partition itself (it sends record batches per partition,
issue 12): it must pick the one aiokafka's own ``send()`` would, so one aggregate's events
keep landing in one partition, where they always did."""

from uuid import UUID

from aiokafka.partitioner import DefaultPartitioner
from aiokafka.partitioner import murmur2 as aiokafka_murmur2
from hypothesis import given
from hypothesis import strategies as st

from services.relay import murmur2, partition_for


@given(st.binary(max_size=200))
def test_murmur2_is_the_hash_aiokafka_partitions_with(key: bytes) -> None:
    assert murmur2(key) == aiokafka_murmur2(key)


@given(st.uuids(), st.integers(1, 64))
def test_an_aggregate_goes_to_the_partition_the_default_partitioner_picks(
    aggregate: UUID, count: int
) -> None:
    key, partitions = str(aggregate).encode(), list(range(count))
    assert partition_for(key, partitions) == DefaultPartitioner()(key, partitions, partitions)
