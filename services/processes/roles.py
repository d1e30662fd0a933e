"""What each process role is given: a metrics port of its own and a PostgreSQL connection
budget sized for what it runs (docs/operations.md shows both tables; a test keeps them equal).

Metrics ports differ per role so that the processes of one stack, started one per terminal on
one host, each serve ``/metrics`` without colliding; ``FEEDBACKLOOP_METRICS_PORT`` still
overrides (0: none). The API's workers take ``api``'s port and the next ones, one each; it
comes last so that its range runs into no other role's.

A process's connections come from three pools, each bounded here:

- ``readers`` + ``queries``: its asyncpg pool. Every reader of the log holds a connection
  while it follows (its LISTEN, its applies, its advisory lock — also while it stands by);
  ``queries`` are for requests, heartbeats and short reads.
- ``library``: the eventsourcing library's psycopg pool (reading the log, loading aggregates,
  appends with tracking records); up to four of them kept open, the rest opened on demand.
- ``bus``: the command bus's own asyncpg pool (a batch's lookup while the one before it
  appends), opened on first use: processes that never send a command never open it.
"""

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Role:
    name: str
    metrics_port: int  # 0: this role serves no metrics
    readers: int
    queries: int
    library: int
    bus: int

    @property
    def pool_size(self) -> int:
        return self.readers + self.queries

    @property
    def library_kept_open(self) -> int:
        return min(4, self.library)

    @property
    def connections(self) -> int:
        """The most it holds at once (per worker, for the API)."""
        return self.pool_size + self.library + self.bus


# serve runs everything: the read models, the relay, the three webhooks (hand-overs,
# reporters' notices, digests' posts) and the digest's triage intake read the log, and one
# connection LISTENs for changes of keys and grants (services/edge/key_refresh.py).
SERVE = Role("serve", 9464, readers=16, queries=8, library=12, bus=2)
PROJECTOR = Role("projector", 9465, readers=10, queries=1, library=2, bus=0)
RELAY = Role("relay", 9466, readers=1, queries=1, library=2, bus=0)
INBOUND = Role("inbound", 9467, readers=0, queries=2, library=2, bus=2)
SCHEDULER = Role("scheduler", 9468, readers=0, queries=2, library=2, bus=2)
# handover: what leaves for the outside, the three webhooks and the triage intake.
HANDOVER = Role("handover", 9469, readers=4, queries=1, library=2, bus=2)
# Per worker; its one "reader" LISTENs for changes of keys and grants.
API = Role("api", 9470, readers=1, queries=3, library=2, bus=2)
# `feedbackloop api` runs a worker per core, but no more than this unless told: each worker
# holds its own pools, and a default that grows with the host's cores would not let the
# README's layout fit a default PostgreSQL (two stacks: 88 of 97 connections with two).
API_DEFAULT_WORKERS = 2
# One-shot commands for operators: status, parked.
OPERATOR = Role("operator", 0, readers=0, queries=2, library=1, bus=0)
# A rebuild builds indexes several at once and catches up every read model side by side.
REBUILD = Role("rebuild", 0, readers=0, queries=21, library=12, bus=0)

ROLES = {
    role.name: role
    for role in (SERVE, API, PROJECTOR, RELAY, INBOUND, SCHEDULER, HANDOVER, OPERATOR, REBUILD)
}


def stack_connections(api_workers: int = 2) -> int:
    """The most one stack of api, projector, relay, inbound and scheduler holds at once."""
    return API.connections * api_workers + sum(
        r.connections for r in (PROJECTOR, RELAY, INBOUND, SCHEDULER)
    )


def projector_with(readers: int) -> Role:
    """``feedbackloop projector --only …``: a connection for each read model it runs."""
    return replace(PROJECTOR, readers=readers)
