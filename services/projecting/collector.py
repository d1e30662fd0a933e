"""A rebuild's pass with Python's cyclic collector paused: the fast path of a pass that keeps
pages of thousands of events alive while it applies them, which every collection would walk
again. The pass makes no cycles, so nothing is left for the collector to free; whatever a
failure leaves in a cycle is collected once the pass ends. The plain path is the same pass
with the collector on (``tests/integration/test_rebuild_fast_paths.py``)."""

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic collector off for the block, back on (if it was) after it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
