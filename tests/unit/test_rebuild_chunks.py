"""The chunks a rebuild's worker processes take (``services.projecting.apart.spans``): every
position once, in order, none larger than ``CHUNK``, smaller towards the end so the workers
finish together."""

from hypothesis import given
from hypothesis import strategies as st

from services.projecting.apart import CHUNK, spans
from services.projecting.runner import REBUILD_PAGE


@given(head=st.integers(0, 3_000_000), processes=st.integers(1, 16))
def test_the_chunks_cover_every_position_once_in_order(head: int, processes: int) -> None:
    chunks = list(spans(head, processes))
    ends = [0, *(upto for _, upto in chunks)]
    assert [after for after, _ in chunks] == ends[:-1]
    assert ends[-1] == head
    assert all(0 < upto - after <= CHUNK for after, upto in chunks)
    # Only the very last chunk may be smaller than a page.
    assert all(upto - after >= min(REBUILD_PAGE, CHUNK) for after, upto in chunks[:-1])


def test_the_chunks_shrink_towards_the_end_of_a_million_events() -> None:
    sizes = [upto - after for after, upto in spans(1_000_000, 2)]
    assert sizes[0] == CHUNK
    assert sizes == sorted(sizes, reverse=True)
    # What the workers have left at the end is a few pages each, not a whole chunk.
    assert sum(sizes[-4:]) <= 4 * REBUILD_PAGE
