"""The composition root: the one place that reads settings and wires the parts together.

Every process (``feedbackloop serve | api | projector | relay | inbound``) opens a Runtime and
runs the parts it is for. What each bounded context brings is in its declaration
(``services.processes.contexts``); this module only starts it.

The Runtime's parts that start readers and tasks live beside it, each in its own module:
readers of the log (``log_readers``), Kafka in and out (``kafka_readers``), the readers that
post outside (``posting_readers``), and the tasks that keep gauges and keys current
(``refreshers``). The HTTP server's lifespan is ``http_lifespan.serving``.
"""

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import asyncpg
from fastapi import FastAPI

from services.bus.command_bus import CommandBus
from services.console.app import install_console
from services.console.sessions import SessionSeal
from services.datasets.grpc import Learning, serve_grpc
from services.declaration import Given
from services.digests.builder import DigestBuilder
from services.edge.auth import KeyRing
from services.edge.http import Http
from services.edge.key_refresh import KeyRefresher
from services.edge.positions import PositionSeal
from services.edge.tokens import TokenVerifier
from services.edge.widget_tokens import WidgetTokens, widget_key
from services.followers.standing import ReaderHealth
from services.followers.status import ReaderStatus
from services.followers.supervisor import Supervisor
from services.kafka.inbound import InboundConsumer
from services.nightly.runner import NightlyRunner
from services.observing.metrics import show_tenant_ids
from services.processes import scheduled
from services.processes.console_settings import console_settings
from services.processes.embedded import start_embedded_postgres
from services.processes.health import instance_incidents, readiness_body
from services.processes.http_app import http_app
from services.processes.kafka_readers import KafkaReaders
from services.processes.opening import load_keys, open_parts
from services.processes.posting_readers import PostingReaders
from services.processes.process_health import INBOUND, process_health
from services.processes.refreshers import Refreshers
from services.processes.reloadable import ReloadableEnviron
from services.processes.roles import SERVE, Role
from services.processes.settings import Settings
from services.processes.waiting import until_reachable
from services.scheduling.orders import BuildDigest, PlanNight
from services.scheduling.scheduler import NAME as SCHEDULER
from services.scheduling.scheduler import Scheduler
from services.store.event_store import EventStore
from services.store.fast_loop_store import LoopStore

__all__ = ["Runtime"]

log = logging.getLogger("feedbackloop")


@dataclass
class Runtime(KafkaReaders, PostingReaders, Refreshers):
    settings: Settings
    database_url: str
    store: EventStore
    pool: asyncpg.Pool
    bus: CommandBus
    loop_store: LoopStore
    keys: KeyRing
    dev_key: str | None = None
    stop_embedded: Callable[[], None] | None = None
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    supervisor: Supervisor = field(init=False)
    readers: dict[str, ReaderStatus] = field(default_factory=dict)
    consumer: InboundConsumer | None = None
    scheduler: Scheduler | None = None
    untrace: Callable[[], None] | None = None
    unserve_metrics: Callable[[], None] | None = None
    served_metrics_port: int | None = None
    grpc_server: Any = None  # grpc.aio.Server, when FEEDBACKLOOP_GRPC_PORT is set
    positions: PositionSeal = field(init=False)  # set by open(): the key is in the database
    # The console's cookies: open() seals them with the database's key, so every replica opens
    # every session; a runtime never opened (one that only draws documents) uses its own.
    sessions: SessionSeal = field(default_factory=SessionSeal.ephemeral)
    # The trusted issuers' tokens: one verifier for the runtime's life, so every app it makes
    # shares the cached JWKS and its refetch cool-down (decisions D32).
    tokens: TokenVerifier = field(init=False)
    role: Role = SERVE  # its metrics port and connection budget (services/processes/roles.py)
    refresher: KeyRefresher | None = None  # keeps ``keys`` at the store's keys and grants

    def __post_init__(self) -> None:
        self.supervisor = Supervisor(self.stop)
        self.tokens = self.settings.token_verifier()

    @classmethod
    async def open(cls, settings: Settings, role: Role = SERVE, *, wait: bool = False) -> "Runtime":
        """Connect and wire everything for ``role``. With ``wait``, a PostgreSQL that is
        down, restarting or full is waited for (services/processes/waiting.py) instead of
        failing: long-running processes wait, an operator's one-shot command says so at once."""
        stop_embedded = None
        if settings.database_url is None:
            database_url, stop_embedded = await asyncio.to_thread(
                start_embedded_postgres, settings.data_dir
            )
        else:
            database_url = settings.database_url

        def connect() -> Awaitable[Any]:
            return open_parts(settings, role, database_url)

        try:
            opened = await (until_reachable(database_url, connect) if wait else connect())
        except BaseException:
            if stop_embedded is not None:
                await asyncio.to_thread(stop_embedded)
            raise
        keys, dev_key = load_keys(settings)
        show_tenant_ids(settings.metrics_tenant_labels)
        runtime = cls(
            settings, database_url, opened.store, opened.pool, opened.bus, opened.loop_store,
            keys, dev_key, stop_embedded, role=role,
        )  # fmt: skip
        runtime.positions = PositionSeal(opened.position_key)
        # The widget's tokens: signed under a key every replica derives alike (D230).
        keys.signed = WidgetTokens(widget_key(opened.position_key))
        runtime.sessions = SessionSeal(opened.session_key)
        return runtime

    async def close(self) -> None:
        if self.stop.is_set():
            return  # closed already
        if self.grpc_server is not None:
            await self.grpc_server.stop(grace=1)
        await self.supervisor.aclose()
        await self.bus.aclose()
        await self.loop_store.close()
        if self.untrace is not None:
            self.untrace()
        if self.unserve_metrics is not None:
            self.unserve_metrics()
        await self.pool.close()
        self.store.close()
        if self.stop_embedded is not None:
            await asyncio.to_thread(self.stop_embedded)

    def reloadable(self) -> ReloadableEnviron:
        """The environment with the operator's reloadable settings file over it (D152)."""
        return ReloadableEnviron(os.environ, self.settings.reloadable_settings_file)

    def given(self, environ: Mapping[str, str] | None = None) -> Given:
        """What the contexts are given to build their routes and scheduled work from."""
        return scheduled.given(
            self.settings, self.store, self.bus, self.pool, self.keys,
            environ=self.reloadable() if environ is None else environ,
        )  # fmt: skip

    async def start_grpc(self, port: int | None = None) -> int | None:
        """gRPC ``Learning`` beside the API (SPEC C22); answers its port, or None when off."""
        port = self.settings.grpc_port if port is None else port
        if not port:
            log.info("grpc: off (FEEDBACKLOOP_GRPC_PORT=0)")
            return None
        learning = Learning(self.store, self.pool, self.keys, self.tokens, self.bus.audit)
        self.grpc_server, bound = await serve_grpc(learning, self.settings.grpc_host, port)
        return bound

    def nightly_runner(self, environ: Mapping[str, str] | None = None) -> NightlyRunner:
        runner: NightlyRunner = scheduled.carried_out_by(self.given(environ), PlanNight)
        return runner

    def digest_builder(self) -> DigestBuilder:
        builder: DigestBuilder = scheduled.carried_out_by(self.given(), BuildDigest)
        return builder

    def new_scheduler(self) -> Scheduler:
        return scheduled.new_scheduler(self.given(), self.settings.scheduler_tick_seconds)

    def start_scheduler(self) -> Scheduler:
        scheduler = self.scheduler = self.new_scheduler()
        self.supervisor.start(SCHEDULER, lambda: scheduler.run(self.stop))
        log.info("scheduler: ticking every %.0f s", self.settings.scheduler_tick_seconds)
        return scheduler

    def running(self) -> list[str]:
        """The readers this process runs."""
        return [
            *self.readers,
            *([INBOUND] if self.consumer else []),
            *([SCHEDULER] if self.scheduler else []),
        ]

    async def health(self, only: list[str] | None = None) -> list[ReaderHealth]:
        """How each reader stands (all known ones, or ``only`` these), from PostgreSQL."""
        return await process_health(self.settings, self.store, self.pool, self.supervisor, only)

    async def readiness(self) -> dict[str, Any]:
        """``/readyz``'s body: whether this process can serve, and what degrades the
        instance (the gauges of the same are read by ``read_model_gauges.refresh``)."""
        await self.pool.fetchval("SELECT 1")
        report = await self.health(only=self.running())
        return readiness_body(report, await instance_incidents(self.pool))

    def app(self, lifespan: Any = None) -> FastAPI:
        wait = self.settings.read_wait_seconds
        refresher = None if self.pool is None else self.key_refresher()
        http = Http(
            self.bus,
            self.pool,
            self.keys,
            wait,
            self.positions,
            tokens=self.tokens,
            refresher=refresher,
            kafka=self.settings.kafka_bootstrap_servers,
        )
        app, self.untrace = http_app(http, self.given(), self.readiness, lifespan)
        install_console(app, http, self.sessions, console_settings(self.settings, self.dev_key))
        return app
