"""How each reader of the log and the inbound consumers stand, read from PostgreSQL so that
any process can tell: ``feedbackloop status``, ``/readyz``, ``GET /factory/operations/readers``
and the console's Operations page read the same figures (``services.scheduling.standing``
puts them together with the scheduler's). A reader's position, lag and state are figures of
the instance, never of a tenant: they are shown to every Operator.

A **problem** stops the reader doing its job (not seen lately, too far behind, waiting for
something); an **incident** is for an operator but does not stop it (what it parked).
"""

from dataclasses import dataclass, field

import asyncpg

from services.followers.heartbeats import SILENCE, heard, inbound_reader
from services.followers.parking import INBOUND, REBUILDS, count_parked
from services.followers.reader import Connection
from services.store.event_store import EVENTS_TABLE

# The defaults of FEEDBACKLOOP_READER_MAX_LAG and FEEDBACKLOOP_READER_MAX_SILENCE_SECONDS.
MAX_LAG = 10_000  # log positions behind the head
MAX_SILENCE = 30.0  # seconds since its last heartbeat


async def log_head(pool: asyncpg.Pool | Connection) -> int:
    """The event store's head: the position of its latest event (0 when empty)."""
    head = await pool.fetchval(f"SELECT max(notification_id) FROM {EVENTS_TABLE}")
    return int(head or 0)


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
