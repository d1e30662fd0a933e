"""The collector settled at start-up (``services.processes.collector``) against Python's
defaults: the objects start-up made are no longer walked, collections are rarer, and garbage
made afterwards is still collected."""

import json
import subprocess
import sys

PROBE = """
import gc, json
from services.processes.collector import COLLECTOR_THRESHOLDS, settle_collector

defaults = gc.get_threshold()
tracked = len(gc.get_objects())
settle_collector()
frozen = gc.get_freeze_count()

class Node:
    pass

a, b = Node(), Node()
a.other, b.other = b, a  # a cycle only the collector can free
del a, b
collected = gc.collect()
print(json.dumps({
    "defaults": defaults, "settled": gc.get_threshold(), "expected": COLLECTOR_THRESHOLDS,
    "tracked": tracked, "frozen": frozen, "collected": collected,
}))
"""


def test_settling_freezes_what_start_up_made_and_still_collects_later_cycles() -> None:
    run = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True
    )
    seen = json.loads(run.stdout)
    assert seen["defaults"] == [700, 10, 10]  # the plain path: Python's own thresholds
    assert seen["settled"] == list(seen["expected"])
    assert seen["frozen"] >= seen["tracked"]  # start-up's objects are out of the collector's walk
    assert seen["collected"] >= 2  # the two nodes of the cycle made after settling
