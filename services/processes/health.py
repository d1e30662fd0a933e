"""How every reader of the log stands, read from PostgreSQL so that any process can tell:
``feedbackloop status`` (compose's health checks) and ``/readyz``.

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

import json
from dataclasses import dataclass, field
from typing import Any

import asyncpg

from services.followers.heartbeats import SILENCE, heard, inbound_reader
from services.followers.parking import INBOUND, REBUILDS, count_parked, parked_by_reader
from services.followers.reader import Connection
from services.scheduling.failures import SCHEDULER, Failing, failing_by_job, failing_incidents


@dataclass(frozen=True)
class ReaderHealth:
    name: str
    position: int
    lag: int
    parked: int
    state: str
    seen_seconds_ago: float | None  # None: never seen
    problems: list[str] = field(default_factory=list)  # it cannot do its job: not ready
    incidents: list[str] = field(default_factory=list)  # for an operator: degraded, ready

    @property
    def ok(self) -> bool:
        """Ready: nothing stops it (incidents do not)."""
        return not self.problems

    @property
    def degraded(self) -> bool:
        return bool(self.incidents)


def parked_incident(parked: int) -> list[str]:
    """An operator's to-do, not a readiness failure (module docstring)."""
    return [f"{parked} parked events (feedbackloop parked list)"] if parked else []


async def readers_health(
    pool: asyncpg.Pool | Connection,
    head: int,
    *,
    only: list[str] | None = None,
    max_lag: int,
    max_silence: float,
) -> list[ReaderHealth]:
    rows = await pool.fetch(
        "SELECT r.reader, r.position, coalesce(h.state, 'new') AS state, "
        f"{SILENCE} AS silence, "
        "(SELECT count(*) FROM parked p WHERE p.reader = r.reader) AS parked "
        "FROM reader_positions r LEFT JOIN heartbeats h ON h.reader = r.reader AND h.member = '' "
        f"WHERE r.reader NOT LIKE '{REBUILDS}' ORDER BY r.reader"
    )
    found = {row["reader"]: row for row in rows}
    report = []
    for name in only if only is not None else list(found):
        row = found.get(name)
        if row is None:
            report.append(ReaderHealth(name, 0, head, 0, "never started", None, ["never started"]))
            continue
        lag = max(head - row["position"], 0)
        problems = []
        silence = row["silence"]
        if silence is None or silence > max_silence:
            problems.append("not running" if silence is None else f"not seen for {silence:.0f} s")
        elif row["state"] != "following" and row["state"] != "standby":
            problems.append(row["state"])
        if lag > max_lag:
            problems.append(f"{lag} positions behind (more than {max_lag})")
        parked = row["parked"]
        report.append(
            ReaderHealth(
                name,
                row["position"],
                lag,
                parked,
                row["state"],
                silence,
                problems,
                parked_incident(parked),
            )
        )
    return report


async def inbound_health(
    pool: asyncpg.Pool | Connection, group_id: str, *, max_lag: int, max_silence: float
) -> ReaderHealth:
    """The inbound consumers of ``group_id``, as one reader: alive when one has been seen
    lately, its lag the messages its partitions hold beyond what was settled. Parked messages
    are an incident that does not fail it: they are settled (too big even for the dead-letter
    topic), and a neighbour must not be able to make the service unready by sending one."""
    members = await heard(pool, inbound_reader(group_id))
    parked = await count_parked(pool, INBOUND)
    live = [m for m in members if m.silence <= max_silence]
    if not live:
        silence = members[0].silence if members else None
        problem = "not running" if silence is None else f"not seen for {silence:.0f} s"
        return ReaderHealth(
            "inbound", 0, 0, parked, "stopped", silence, [problem], parked_incident(parked)
        )
    lag = sum(m.lag for m in live)
    states = sorted({m.state for m in live})
    problems = [state for state in states if state != "consuming"]
    if lag > max_lag:
        problems.append(f"{lag} messages behind (more than {max_lag})")
    settled = sum(m.settled for m in live)
    return ReaderHealth(
        "inbound",
        settled,
        lag,
        parked,
        ", ".join(states),
        live[0].silence,
        problems,
        parked_incident(parked),
    )


def incidents_of(parked: dict[str, int], failing: list[Failing]) -> dict[str, list[str]]:
    """What degrades the instance, by reader: its parked events (``parked_by_reader``) and
    the scheduled units failing now (``failing_by_job``)."""
    incidents = {reader: parked_incident(count) for reader, count in parked.items()}
    if failing:
        incidents[SCHEDULER] = failing_incidents(failing)
    return incidents


async def instance_incidents(pool: asyncpg.Pool | Connection) -> dict[str, list[str]]:
    """``incidents_of`` the whole instance now, whichever process runs each reader."""
    return incidents_of(await parked_by_reader(pool), await failing_by_job(pool))


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


async def scheduler_health(pool: asyncpg.Pool, *, max_silence: float) -> ReaderHealth | None:
    """How the scheduler stands, or None where none has ever run."""
    given_up = await pool.fetchval(
        "SELECT given_up FROM scheduler_ticks WHERE name = $1", SCHEDULER
    )
    beats = await heard(pool, SCHEDULER)
    if given_up is None and not beats:
        return None
    last = beats[0] if beats else None
    problems = []
    silence = last.silence if last is not None else None
    if silence is None or silence > max_silence:
        problems.append("not running" if silence is None else f"not seen for {silence:.0f} s")
    for order, reason in json.loads(given_up or "{}").items():
        problems.append(f"gave up on {order}: {reason} (feedbackloop scheduler --order {order})")
    incidents = failing_incidents(await failing_by_job(pool))
    state, pending = (last.state, last.lag) if last is not None else ("new", 0)
    return ReaderHealth(SCHEDULER, 0, pending, 0, state, silence, problems, incidents)
