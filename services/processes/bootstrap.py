"""The composition root: the one place that reads settings and wires the parts together.

Every process (``feedbackloop serve | api | projector | relay | inbound``) opens a Runtime and
runs the parts it is for. What each bounded context brings is in its declaration
(``services.processes.contexts``); this module only starts it.
"""

import asyncio
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
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
from services.digests.intake import TriageIntake
from services.digests.tracker import GitHubTracker
from services.edge.auth import KeyRing
from services.edge.http import Http
from services.edge.key_refresh import KeyRefresher
from services.edge.positions import PositionSeal
from services.edge.tokens import TokenVerifier
from services.edge.widget_tokens import WidgetTokens, widget_key
from services.followers.follower import Follower
from services.followers.reader import Reader
from services.followers.standing import ReaderHealth
from services.followers.status import ReaderStatus
from services.followers.supervisor import Supervisor
from services.kafka.admin import ensure_topics
from services.kafka.divergence import Divergence
from services.kafka.inbound import InboundConsumer
from services.kafka.relay import Relay
from services.kafka.shares import Share
from services.nightly.runner import NightlyRunner
from services.observing.metrics import show_tenant_ids
from services.owners.outbox import AgentWebhookOutbox
from services.owners.sender import NAME as SENDER
from services.owners.sender import AgentWebhookSender, SenderSettings
from services.permissions.sources import SourceRoles
from services.processes import scheduled
from services.processes.console_settings import console_settings
from services.processes.contexts import SUBSCRIPTIONS, read_models
from services.processes.embedded import start_embedded_postgres
from services.processes.health import instance_incidents, readiness_body
from services.processes.http_app import http_app
from services.processes.metrics_port import Served
from services.processes.opening import load_keys, open_parts
from services.processes.process_health import INBOUND, process_health
from services.processes.published import PUBLICATIONS, TOPICS
from services.processes.read_model_gauges import keep_refreshed
from services.processes.reloadable import ReloadableEnviron
from services.processes.roles import SERVE, Role
from services.processes.settings import Settings
from services.processes.waiting import until_reachable
from services.processes.webhooks import webhook_readers
from services.projecting.live import ProjectionReader
from services.scheduling.orders import BuildDigest, PlanNight
from services.scheduling.scheduler import NAME as SCHEDULER
from services.scheduling.scheduler import Scheduler
from services.store.event_store import EventStore
from services.store.fast_loop_store import LoopStore

__all__ = ["Runtime", "read_models", "serving"]

log = logging.getLogger("feedbackloop")
GAUGES = "metrics-gauges"  # the supervised task that refreshes the read-model gauges
KEYS = "keys"  # the supervised task that keeps the key ring at the store's keys and grants


@dataclass
class Runtime:
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

    def metrics_served(self, served: Served | None) -> int | None:
        """Metrics are served (``serve_metrics``, before the process connected, or None when
        off): keep the read-model gauges refreshed there, and stop serving when closed. The
        counts of things that stand are read from the read models, whichever process changed
        them (SPEC C49, C50). Answers the port."""
        if served is None:
            return None
        self.served_metrics_port, self.unserve_metrics = served
        self.supervisor.start(GAUGES, lambda: keep_refreshed(self.pool, self.stop))
        return self.served_metrics_port

    async def start_grpc(self, port: int | None = None) -> int | None:
        """gRPC ``Learning`` beside the API (SPEC C22); answers its port, or None when off."""
        port = self.settings.grpc_port if port is None else port
        if not port:
            log.info("grpc: off (FEEDBACKLOOP_GRPC_PORT=0)")
            return None
        learning = Learning(self.store, self.pool, self.keys, self.tokens, self.bus.audit)
        self.grpc_server, bound = await serve_grpc(learning, self.settings.grpc_host, port)
        return bound

    def follow(self, reader: Reader) -> Follower:
        """Run a reader of the log on the follower, supervised."""
        follower = Follower(self.store, self.pool, reader)
        self.readers[reader.name] = follower.status
        self.supervisor.start(reader.name, lambda: follower.run(self.stop))
        return follower

    def start_projections(self, only: list[str] | None = None) -> None:
        for projection in read_models():
            if only and projection.name not in only:
                continue
            self.follow(ProjectionReader(projection))
            log.info("projection %s: running", projection.name)

    async def start_relay(self) -> Relay | None:
        """The relay of this process's share of the log (FEEDBACKLOOP_RELAY_SHARE)."""
        if not self.settings.kafka_bootstrap_servers:
            log.warning("relay: off (no KAFKA_BOOTSTRAP_SERVERS): events stay in the store")
            return None
        share = Share.parse(self.settings.relay_share)
        relay = Relay(
            self.settings.kafka_bootstrap_servers,
            PUBLICATIONS,
            source=self.settings.cloudevents_source,
            topic_prefix=self.settings.topic_prefix,
            prepare=self.ensure_topics,
            divergence=self.divergence(),
            share=share,
        )
        self.follow(relay)
        return relay

    def divergence(self, reader: str | None = None) -> Divergence:
        """The relay's topics compared with the store (decisions D49), from where ``reader``
        stands (by default the relay of FEEDBACKLOOP_RELAY_SHARE)."""
        assert self.settings.kafka_bootstrap_servers
        reader = reader or Share.parse(self.settings.relay_share).name
        topics = [self.settings.topic_prefix + p.topic for p in PUBLICATIONS]
        return Divergence(
            self.settings.kafka_bootstrap_servers, topics, self.store, self.pool, reader=reader
        )

    async def ensure_topics(self) -> None:
        assert self.settings.kafka_bootstrap_servers
        await ensure_topics(
            self.settings.kafka_bootstrap_servers,
            tuple(self.settings.topic_prefix + name for name in TOPICS),
            self.settings.topic_partitions,
            self.settings.topic_replication_factor,
        )

    def start_handover_webhook(self) -> Reader | None:
        """The hand-over webhook's readers (the weekly digest's posts take the same route,
        SPEC W123), when one is configured; answers the hand-overs' reader."""
        readers = webhook_readers(self.settings, self.store, self.bus)
        for reader in readers:
            self.follow(reader)
        return readers[0] if readers else None

    def start_agent_webhooks(self) -> AgentWebhookOutbox:
        """Agents' webhooks (decisions D194, D195): the outbox follows the log, the sender
        posts its due rows; both supervised, in every process that delivers webhooks."""
        outbox = AgentWebhookOutbox(self.pool, self.settings.cloudevents_source)
        self.follow(outbox)
        sender = AgentWebhookSender(
            self.pool,
            SenderSettings(
                max_attempts=self.settings.agent_webhook_max_attempts,
                backoff_seconds=self.settings.agent_webhook_backoff_seconds,
                max_backoff_seconds=self.settings.agent_webhook_max_backoff_seconds,
            ),
        )
        self.supervisor.start(SENDER, lambda: sender.run(self.stop))
        return outbox

    def triage_intake(self) -> TriageIntake:
        """The triage intake of the weekly digest, with each tenant's tracker (decisions D66)."""
        trackers = {
            tenant: GitHubTracker(tracker.url, tracker.token.get_secret_value())
            for tenant, tracker in self.settings.trackers.items()
        }
        return TriageIntake(
            self.store, self.bus, trackers,
            backoff_seconds=self.settings.tracker_backoff_seconds,
            max_backoff_seconds=self.settings.tracker_max_backoff_seconds,
        )  # fmt: skip

    def start_intake(self) -> Reader | None:
        """The triage intake, when a tracker is configured (none: the digest's posts go to
        Kafka and the webhook only, and the log says so)."""
        if not self.settings.trackers:
            log.info("triage intake: no tracker configured (FEEDBACKLOOP_TRACKERS)")
            return None
        intake = self.triage_intake()
        self.follow(intake)
        log.info("triage intake: trackers of %d tenant(s)", len(self.settings.trackers))
        return intake

    def inbound_consumer(self) -> InboundConsumer:
        return InboundConsumer(
            self.bus,
            self.store,
            self.pool,
            SUBSCRIPTIONS,
            bootstrap=self.settings.kafka_bootstrap_servers or "localhost:9092",
            group_id=self.settings.inbound_group_id,
            topic_prefix=self.settings.topic_prefix,
            prepare=self.ensure_topics,
            sources=SourceRoles(self.settings.kafka_source_roles),
        )

    async def start_inbound(self) -> InboundConsumer | None:
        if not self.settings.kafka_bootstrap_servers:
            log.warning("inbound: off (no KAFKA_BOOTSTRAP_SERVERS): commands come over HTTP only")
            return None
        consumer = self.inbound_consumer()
        self.supervisor.start(INBOUND, lambda: consumer.run(self.stop))
        self.consumer = consumer
        return consumer

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

    async def start_key_refresher(self) -> KeyRefresher:
        """The store's keys and grants in ``keys`` before the first request, and again
        whenever they change (decisions D29)."""
        refresher = self.key_refresher()
        await refresher.refresh()
        self.supervisor.start(KEYS, lambda: refresher.run(self.stop))
        return refresher

    def key_refresher(self) -> KeyRefresher:
        if self.refresher is None:
            self.refresher = KeyRefresher(self.pool, self.keys)
        return self.refresher

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


@asynccontextmanager
async def serving(runtime: Runtime, everything: bool) -> AsyncIterator[None]:
    """The HTTP server's lifespan. With ``everything``, one process runs it all: API, read
    models, hand-over webhook, relay and inbound consumers. The runtime is closed here, at
    the server's shutdown, because uvicorn re-raises SIGTERM once it has shut down."""
    broker = None
    try:
        await runtime.start_key_refresher()
        await runtime.start_grpc()  # the API's processes answer gRPC too (SPEC C22)
        if everything:
            runtime.start_projections()
            runtime.start_handover_webhook()
            runtime.start_agent_webhooks()
            runtime.start_intake()
            await runtime.start_relay()
            broker = await runtime.start_inbound()
            runtime.start_scheduler()
        yield
    finally:
        if broker is not None:
            await broker.stop()
        await runtime.close()
