"""Which failures are the surroundings' (try again later) rather than the event's own (park
it): the one list for the wait at start (``services/processes/waiting.py``), the readers'
retries and the scheduled units."""

import asyncpg
import psycopg
from aiokafka.errors import KafkaError, KafkaTimeoutError
from eventsourcing.persistence import PersistenceError as StoreUnavailable

from services.followers.reader import Connection


def postgresql_away(error: BaseException) -> bool:
    """PostgreSQL is away, starting, shutting down or full ("too many clients") — a condition
    that passes, not a misconfiguration: a wrong password or database name is not one
    (asyncpg, which connects first, names those apart)."""
    return isinstance(
        error,
        OSError
        | TimeoutError
        | asyncpg.PostgresConnectionError
        | asyncpg.InterfaceError
        | asyncpg.CannotConnectNowError
        | asyncpg.AdminShutdownError
        | asyncpg.TooManyConnectionsError
        | psycopg.OperationalError
        # the library's own names for its driver's failures
        | StoreUnavailable,
    )


def is_transient(error: BaseException) -> bool:
    """A failure of the surroundings, not of the event: try again, never park."""
    if isinstance(error, KafkaError):
        return bool(getattr(error, "retriable", False)) or isinstance(error, KafkaTimeoutError)
    return postgresql_away(error)


def connected(conn: Connection) -> bool:
    """Whether the session still stands. Once it is lost, the pool detaches its proxy and
    every method of it raises, which must not hide the failure that cut the session."""
    try:
        return not conn.is_closed()
    except asyncpg.InterfaceError:
        return False
