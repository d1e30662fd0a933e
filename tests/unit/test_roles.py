"""Each process role's metrics port and PostgreSQL connection budget (services/processes/roles.py),
and the table of docs/operations.md that operators size their PostgreSQL by."""

import re

import asyncpg
import psycopg
import pytest
from eventsourcing.persistence import InterfaceError as LibraryInterfaceError
from eventsourcing.persistence import OperationalError as LibraryOperationalError

from services.followers.transient import is_transient, postgresql_away
from services.processes import roles
from services.processes.contexts import read_models
from services.processes.metrics_port import metrics_port
from services.processes.settings import Settings
from tests.servers import ROOT

pytestmark = pytest.mark.unit

LONG_RUNNING = [r for r in roles.ROLES.values() if r.metrics_port]
# A default PostgreSQL: max_connections 100, of which 3 are kept for superusers.
DEFAULT_CONNECTIONS = 100 - 3


def test_each_long_running_role_serves_metrics_on_a_port_of_its_own() -> None:
    ports = [r.metrics_port for r in LONG_RUNNING]
    assert len(set(ports)) == len(ports) == 7
    # The API's workers take its port and the next ones: nothing of another role above it.
    assert max(ports) == roles.API.metrics_port


def test_the_metrics_port_setting_overrides_the_roles_own_and_0_turns_it_off() -> None:
    assert metrics_port(Settings(), roles.RELAY) == 9466
    assert metrics_port(Settings(metrics_port=9999), roles.RELAY) == 9999
    assert metrics_port(Settings(metrics_port=0), roles.RELAY) == 0


def test_a_reader_of_the_log_has_a_connection_of_its_own_in_the_roles_that_run_it() -> None:
    assert roles.PROJECTOR.readers == len(read_models())
    assert roles.projector_with(2).readers == 2
    # serve: the read models, the relay, the three webhooks (hand-overs, notices, digests),
    # the digest's triage intake and the LISTEN for changes of keys and grants.
    assert roles.SERVE.readers == len(read_models()) + 1 + 3 + 1 + 1
    assert roles.RELAY.readers == 1


def test_two_stacks_of_the_readme_layout_fit_a_default_postgresql_with_room_to_spare() -> None:
    """The API's workers (one per core) each hold their own pools: two stacks with two
    workers each — the default on a 2-core host — leave at least seven connections over (each
    read model the projector runs takes one per stack; the review queues' took two of nine)."""
    assert 2 * roles.stack_connections(api_workers=2) <= DEFAULT_CONNECTIONS - 7
    assert 2 * roles.stack_connections(api_workers=1) <= DEFAULT_CONNECTIONS - 23


def operations_table() -> dict[str, list[str]]:
    text = (ROOT / "docs" / "operations.md").read_text()
    rows = re.findall(r"^\| `([a-z]+)`[^|]*\|(.*)\|\s*$", text, re.MULTILINE)
    return {name: [cell.strip() for cell in cells.split("|")] for name, cells in rows}


def test_the_operations_page_shows_every_roles_port_and_budget_as_built() -> None:
    table = operations_table()
    for role in roles.ROLES.values():
        port = str(role.metrics_port) if role.metrics_port else "—"
        if role is roles.API:
            port = f"{role.metrics_port} + worker"
        budget = [str(n) for n in (role.readers, role.queries, role.library, role.bus)]
        assert table[role.name] == [port, *budget, str(role.connections)], role.name


@pytest.mark.parametrize(
    "error",
    [
        ConnectionRefusedError(111, "Connect call failed"),
        TimeoutError(),
        asyncpg.TooManyConnectionsError("sorry, too many clients already"),
        asyncpg.CannotConnectNowError("the database system is starting up"),
        psycopg.OperationalError("connection failed"),
        asyncpg.InterfaceError("connection is closed"),
        LibraryOperationalError("server closed the connection unexpectedly"),
        LibraryInterfaceError("the connection is lost"),
    ],
)
def test_a_postgresql_that_is_away_starting_or_full_is_waited_for_and_retried(
    error: Exception,
) -> None:
    """One list for the wait at start and for the readers' and scheduled units' retries: a
    full server during a scheduled run is no tenant's failure."""
    assert postgresql_away(error)
    assert is_transient(error)


@pytest.mark.parametrize(
    "error",
    [
        asyncpg.InvalidPasswordError("password authentication failed"),
        asyncpg.InvalidCatalogNameError('database "nope" does not exist'),
        ValueError("a bug"),
    ],
)
def test_a_misconfiguration_or_a_bug_is_not_waited_for(error: Exception) -> None:
    assert not postgresql_away(error)
