"""Eval cases: lift a report into a repeatable test, run it, score it."""
