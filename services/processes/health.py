"""What degrades the instance and what ``/readyz`` answers, from how every reader stands
(``services.followers.standing``, ``services.scheduling.standing``).

Two kinds of finding, kept apart because they ask for different answers:

- a **problem** stops the reader doing its job: not seen lately (its heartbeat is older than
  ``max_silence``: dead, or never started), more than ``max_lag`` positions behind the store's
  head, or waiting for something (Kafka away). A process with a problem is not ready.
- an **incident** is for an operator but does not stop the reader: what it parked (a log
  reader's events, the inbound consumers' messages: ``services.followers.parking``), and the
  scheduler's units failing now (``services.scheduling.failures``). One event, possibly
  one tenant's bad input, is set aside while every other aggregate flows on; taking the
  instance out of its load balancer for it would let one tenant take the service down for
  all. A reader with incidents is *degraded*: shown in ``/readyz``'s body, in ``feedbackloop
  status``, in the metrics ``feedbackloop_degraded`` and
  ``feedbackloop_instance_parked_events`` (``services.processes.read_model_gauges``) and in the log.

Every reader heartbeats in one table (``services.followers.heartbeats``); the inbound
consumers' lag is counted in Kafka messages.
"""

from typing import Any

import asyncpg

from services.followers.parking import parked_by_reader, parked_for
from services.followers.reader import Connection
from services.followers.standing import ReaderHealth, parked_incident
from services.scheduling.failures import SCHEDULER, Failing, failing_by_job, failing_incidents
from services.store.sealing import BrokenSeal

SEALS = "sealed boxes"  # the incidents of personal data that fails to open (decisions D142)


def incidents_of(
    parked: dict[str, int], failing: list[Failing], broken_seals: int = 0
) -> dict[str, list[str]]:
    """What degrades the instance, by reader: its parked events (``parked_by_reader``) and
    the scheduled units failing now (``failing_by_job``); and, under ``SEALS``, how many of
    the parked events hold a sealed box that fails authentication, named apart because it is
    tampering or corruption of stored data, never an erasure (decisions D142)."""
    incidents = {reader: parked_incident(count) for reader, count in parked.items()}
    if failing:
        incidents[SCHEDULER] = failing_incidents(failing)
    if broken_seals:
        incidents[SEALS] = [
            f"{broken_seals} events hold a sealed box that fails authentication: tampered "
            "with or corrupted, not erased (feedbackloop parked list)"
        ]
    return incidents


async def instance_incidents(pool: asyncpg.Pool | Connection) -> dict[str, list[str]]:
    """``incidents_of`` the whole instance now, whichever process runs each reader."""
    return incidents_of(
        await parked_by_reader(pool),
        await failing_by_job(pool),
        await parked_for(pool, BrokenSeal),
    )


def readiness_body(report: list[ReaderHealth], incidents: dict[str, list[str]]) -> dict[str, Any]:
    """``/readyz``'s answer: ``status`` "ok" (200) unless a reader of this process has a
    problem (503); ``degraded`` and the ``incidents`` per reader of the whole instance
    (``instance_incidents``)."""
    return {
        "status": "ok" if all(r.ok for r in report) else "not ready",
        "degraded": bool(incidents),
        "incidents": incidents,
        "readers": [
            {
                "name": r.name,
                "state": r.state,
                "position": r.position,
                "lag": r.lag,
                "parked": r.parked,
                "problems": r.problems,
                "incidents": r.incidents,
            }
            for r in report
        ],
    }
