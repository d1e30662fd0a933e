"""``feedbackloop api`` without its audit trail: a composition for the bench only (decisions
D283), never a setting of the service.

The service records every decision (decisions D30, D110) and has no switch to turn that off,
so that nobody can; the bench measures what the audit costs over HTTP by running this module
instead of ``feedbackloop api``: the same server settings (uvloop, httptools, a worker process
per core), the same worker (``ApiWorker``) opening the same Runtime, whose bus is handed a
trail that keeps nothing (``Discarded``) before the app is built on it. Started by
``ops/bench.py`` (part ``audit``) as ``python ops/bench_unaudited_api.py [--workers N]``,
with the environment ``feedbackloop api`` reads.
"""

import argparse
import os
import sys
from collections.abc import Iterable
from pathlib import Path

import uvicorn

sys.path[:0] = [str(Path(__file__).resolve().parent.parent)]

from services.bus.audit import AuditTrail  # noqa: E402
from services.bus.units import Decided, Unit  # noqa: E402
from services.processes import roles  # noqa: E402
from services.processes.api_worker import WORKERS_VARIABLE, ApiWorker  # noqa: E402
from services.processes.collector import settle_collector  # noqa: E402
from services.processes.commands_http import WORKER_HEALTHCHECK_SECONDS  # noqa: E402
from services.processes.http_answer_writes import OneWriteHttpTools  # noqa: E402
from services.processes.lifetime import process_settings  # noqa: E402
from services.processes.settings import Settings  # noqa: E402
from services.processes.starting import start  # noqa: E402


class Discarded(AuditTrail):
    """A trail that records nothing: no row built for a command, none written; a door's
    refusal or grant (none in the bench's load) is built and dropped."""

    def record(self, batch: Iterable[Unit], decided: Iterable[Decided] = ()) -> None:
        return None

    def _written_soon(self) -> None:
        self._rows.clear()


class UnauditedApiWorker(ApiWorker):
    """``ApiWorker`` whose runtime's bus gets ``Discarded`` before the app is built on it
    (the door's refusals take the bus's trail when the app is built)."""

    async def start(self) -> None:
        workers = int(os.environ.get(WORKERS_VARIABLE, "1"))
        runtime = self.runtime = await start(self.settings, roles.API, workers=workers)
        assert runtime.pool is not None  # the bench runs on DATABASE_URL
        runtime.bus.audit = Discarded(runtime.pool)
        await runtime.start_key_refresher()
        self.app = runtime.app()
        settle_collector()


def unaudited_api_worker() -> UnauditedApiWorker:
    """uvicorn's app factory in each worker process (imported by name, as ``api_worker``)."""
    return UnauditedApiWorker(Settings())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, help="default: as `feedbackloop api`'s")
    workers = parser.parse_args().workers
    settings = process_settings()
    if workers is None:
        workers = min(os.cpu_count() or 1, roles.API_DEFAULT_WORKERS)
    os.environ[WORKERS_VARIABLE] = str(workers)
    uvicorn.run(
        "bench_unaudited_api:unaudited_api_worker",
        factory=True,
        host=settings.host,
        port=settings.port,
        workers=workers,
        loop="uvloop",
        http=OneWriteHttpTools,
        log_config=None,
        access_log=settings.log_level.upper() in ("DEBUG", "INFO"),
        timeout_worker_healthcheck=WORKER_HEALTHCHECK_SECONDS,
    )


if __name__ == "__main__":
    main()
