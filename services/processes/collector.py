"""Python's cyclic garbage collector, settled once a process has started: the fast path of
a process whose start-up leaves a large heap that lives as long as it does.

Start-up leaves a large set of objects that live as long as the process (modules, pydantic
and FastAPI schemas, the app), and every full collection walks them all; a rebuild, which
allocates millions of short-lived objects, runs many collections. Frozen, the start-up's
objects are never walked again; larger thresholds make collections rarer. The plain path is
Python's defaults, which ``tests/unit/test_collector.py`` holds it against.
"""

import gc

# Collections of the youngest generation, and of the middle one, before the next older one is
# collected (Python's defaults: 700, 10, 10).
COLLECTOR_THRESHOLDS = (20_000, 20, 20)


def settle_collector() -> None:
    """Keep the collector off what start-up made, and collect less often. For a process's
    start-up only (the CLI, an API worker once its app is built): a process that opens
    runtime after runtime (the tests) would freeze the garbage of each."""
    gc.freeze()
    gc.set_threshold(*COLLECTOR_THRESHOLDS)
