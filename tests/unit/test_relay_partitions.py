"""The relay picks each message's partition itself (it sends record batches per partition,
issue 12): it must pick the one aiokafka's own ``send()`` would, so one aggregate's events
keep landing in one partition, where they always did."""

from uuid import UUID

from aiokafka.partitioner import murmur2
from hypothesis import given
from hypothesis import strategies as st

from services.relay import partition_for


@given(st.uuids(), st.integers(1, 64))
def test_an_aggregate_goes_to_the_partition_of_its_keys_murmur2(
    aggregate: UUID, count: int
) -> None:
    key = str(aggregate).encode()
    assert partition_for(key, list(range(count))) == (murmur2(key) & 0x7FFFFFFF) % count
