"""The composition root: the one place that reads settings and wires the parts together.

Every process (``feedbackloop serve | api | projector | relay | inbound``) opens a Runtime and
runs the parts it is for.
"""

import asyncio
import contextlib
import gc
import json
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import asyncpg
from fastapi import FastAPI
from fastapi.responses import JSONResponse
from faststream.kafka import KafkaBroker

from contracts import topics
from projections.appraisal import AppraisalFacts
from projections.datasets import Datasets
from projections.digests import Digests
from projections.eval_cases import EvalCases
from projections.feedback_list import FeedbackList
from projections.inbox import Inbox
from projections.learning_proposals import LearningProposals
from projections.nights import Nights
from projections.read_model import Projection, schema_of
from services.appraisal.api import appraisal_routes
from services.appraisal.handlers import HANDLERS as APPRAISAL_HANDLERS
from services.appraisal.handlers import REPLAYS as APPRAISAL_REPLAYS
from services.artifacts.api import artifact_routes
from services.bus.command_bus import CommandBus
from services.datasets.api import dataset_routes
from services.datasets.domain import HarvestedRun
from services.datasets.grpc import Learning, serve_grpc
from services.datasets.handlers import CREATES as DATASET_CREATES
from services.datasets.handlers import HANDLERS as DATASET_HANDLERS
from services.digests.api import digest_routes
from services.digests.builder import DigestBuilder
from services.digests.handlers import CREATES as DIGEST_CREATES
from services.digests.handlers import HANDLERS as DIGEST_HANDLERS
from services.digests.webhook import DIGEST_WEBHOOK
from services.edge.app import create_app
from services.edge.auth import SCOPES, ApiKeyEntry, KeyRing, new_key
from services.edge.http import Http
from services.edge.positions import PositionSeal, ensure_position_key
from services.evals.agents import agent_client_from_settings
from services.evals.api import eval_routes
from services.evals.handlers import HANDLERS as EVAL_HANDLERS
from services.evals.handlers import REPLAYS as EVAL_REPLAYS
from services.evals.runs import CaseRunner
from services.feedback.api import feedback_routes
from services.feedback.handlers import ALONE, CREATES
from services.feedback.handlers import HANDLERS as FEEDBACK_HANDLERS
from services.followers.follower import Follower, Reader, ReaderStatus, postgresql_away
from services.followers.follower import ensure_tables as ensure_follower_tables
from services.followers.supervisor import Supervisor
from services.kafka.admin import ensure_topics
from services.kafka.inbound import InboundConsumer, ensure_inbound_tables
from services.kafka.inbound.declared import SUBSCRIPTIONS as INBOUND_SUBSCRIPTIONS
from services.kafka.inbound.http import event_routes
from services.kafka.relay import Relay
from services.learning.api import learning_routes
from services.learning.generator import ProposalGenerator
from services.learning.handlers import CREATES as LEARNING_CREATES
from services.learning.handlers import HANDLERS as LEARNING_HANDLERS
from services.learning.settings import LearningSettings
from services.nightly.api import night_routes
from services.nightly.confirmer import read_key_store
from services.nightly.handlers import CREATES as NIGHT_CREATES
from services.nightly.handlers import HANDLERS as NIGHT_HANDLERS
from services.nightly.runner import NightlyRunner
from services.nightly.settings import NightlySettings
from services.observing.metrics import show_tenant_ids
from services.observing.otel import configure as configure_telemetry
from services.observing.tracing import TraceContext
from services.processes.embedded import start_embedded_postgres
from services.processes.health import (
    ReaderHealth,
    inbound_health,
    instance_incidents,
    readers_health,
    readiness_body,
)
from services.processes.metrics_port import Served
from services.processes.published import PUBLICATIONS, TOPICS, declare_publishers
from services.processes.read_model_gauges import keep_refreshed
from services.processes.roles import SERVE, Role
from services.processes.settings import Settings
from services.processes.waiting import until_reachable
from services.projecting.runner import ProjectionReader, ensure_schema
from services.reports.api import report_routes
from services.reports.handlers import HANDLERS as REPORT_HANDLERS
from services.reports.handlers import REPLAYS as REPORT_REPLAYS
from services.reports.webhook import HAND_OVER_WEBHOOK
from services.scheduling.scheduler import NAME as SCHEDULER
from services.scheduling.scheduler import Scheduler, scheduler_health
from services.scheduling.scheduler import ensure_tables as ensure_scheduler_tables
from services.store.artifacts import ensure_table as ensure_artifacts_table
from services.store.event_store import EventStore
from services.store.fast_loop_store import LoopStore
from services.store.opening import open_store
from services.webhooks.reader import WebhookReader
from services.webhooks.signed import SignedWebhook

log = logging.getLogger("feedbackloop")
GAUGES = "metrics-gauges"  # the supervised task that refreshes the read-model gauges

HANDLERS = {
    **FEEDBACK_HANDLERS,
    **REPORT_HANDLERS,
    **EVAL_HANDLERS,
    **DIGEST_HANDLERS,
    **NIGHT_HANDLERS,
    **DATASET_HANDLERS,
    **LEARNING_HANDLERS,
    **APPRAISAL_HANDLERS,
}


def read_models() -> list[Projection]:
    return [
        FeedbackList(),
        Inbox(),
        EvalCases(),
        Digests(),
        Nights(),
        LearningProposals(),
        Datasets(),
        # RunCompleted reaches the store as the datasets context's harvest (its ``run`` field).
        AppraisalFacts(run_events=(HarvestedRun.Harvested,)),
    ]


# Collections of the youngest generation, and of the middle one, before the next older one is
# collected (Python's defaults: 700, 10, 10).
COLLECTOR_THRESHOLDS = (20_000, 20, 20)


def settle_collector() -> None:
    """Keep Python's cyclic garbage collector off what start-up made.

    Start-up leaves about 150,000 objects that live as long as the process (modules, pydantic
    and FastAPI schemas, the app), and every full collection walked them all; a rebuild, which
    allocates millions of short-lived objects, ran dozens of them, and its pages' events were
    walked again at each. Frozen, the start-up's objects are never walked again; the larger
    thresholds make collections rarer. Measured on a rebuild of 100,000 events: about a third
    less CPU. For a process's start-up only (the CLI, an API worker once its app is built): a
    process that opens runtime after runtime (the tests) would freeze the garbage of each."""
    gc.freeze()
    gc.set_threshold(*COLLECTOR_THRESHOLDS)


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
    role: Role = SERVE  # its metrics port and connection budget (services/processes/roles.py)

    def __post_init__(self) -> None:
        self.supervisor = Supervisor(self.stop)

    @classmethod
    async def open(cls, settings: Settings, role: Role = SERVE, *, wait: bool = False) -> "Runtime":
        """Connect and wire everything for ``role``. With ``wait``, a PostgreSQL that is
        down, restarting or full is waited for (services/processes/waiting.py) instead of failing:
        long-running processes wait, an operator's one-shot command says so at once."""
        stop_embedded = None
        if settings.database_url is None:
            database_url, stop_embedded = await asyncio.to_thread(
                start_embedded_postgres, settings.data_dir
            )
        else:
            database_url = settings.database_url

        def connect() -> Awaitable[Runtime]:
            return cls._connect(settings, role, database_url)

        try:
            runtime = await (until_reachable(database_url, connect) if wait else connect())
        except BaseException:
            if stop_embedded is not None:
                await asyncio.to_thread(stop_embedded)
            raise
        runtime.stop_embedded = stop_embedded
        return runtime

    @classmethod
    async def _connect(cls, settings: Settings, role: Role, database_url: str) -> "Runtime":
        """One attempt: every pool it opened is closed again when it fails part-way."""
        opened: list[Callable[[], Awaitable[None]]] = []
        try:
            pool = await asyncpg.create_pool(database_url, min_size=1, max_size=role.pool_size)
            opened.append(pool.close)
            async with pool.acquire() as conn:
                # Every process may start at once on an empty database: the library's tables
                # and ours are created by one process at a time (DDL races on the catalogue's
                # unique indexes otherwise).
                await conn.execute("SELECT pg_advisory_lock(hashtext('feedbackloop-ddl'))")
                try:
                    store = await asyncio.to_thread(
                        open_store,
                        database_url,
                        POSTGRES_POOL_SIZE=str(role.library_kept_open),
                        POSTGRES_MAX_OVERFLOW=str(role.library - role.library_kept_open),
                    )
                    opened.append(lambda: asyncio.to_thread(store.close))
                    await ensure_follower_tables(conn)
                    await ensure_inbound_tables(conn)
                    await ensure_artifacts_table(conn)
                    await ensure_scheduler_tables(conn)
                    position_key = await ensure_position_key(conn)
                finally:
                    await conn.execute("SELECT pg_advisory_unlock(hashtext('feedbackloop-ddl'))")
            for projection in read_models():  # queries never meet a missing table
                await ensure_schema(pool, projection, schema_of(projection))
            loop_store = await LoopStore.open(database_url, store, size=max(role.bus, 1))
        except BaseException:
            for close in reversed(opened):
                with contextlib.suppress(Exception):
                    await close()
            raise
        keys, dev_key = load_keys(settings)
        show_tenant_ids(settings.metrics_tenant_labels)
        bus = CommandBus(
            store,
            HANDLERS,
            max_batch=settings.bus_max_batch,
            creates={
                **CREATES,
                **DIGEST_CREATES,
                **NIGHT_CREATES,
                **LEARNING_CREATES,
                **DATASET_CREATES,
            },
            replays={**REPORT_REPLAYS, **EVAL_REPLAYS, **APPRAISAL_REPLAYS},
            loop_store=loop_store,
            alone=ALONE,
        )
        runtime = cls(settings, database_url, store, pool, bus, loop_store, keys, dev_key)
        runtime.role = role
        runtime.positions = PositionSeal(position_key)
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
        learning = Learning(self.store, self.pool, self.keys)
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
        if not self.settings.kafka_bootstrap_servers:
            log.warning("relay: off (no KAFKA_BOOTSTRAP_SERVERS): events stay in the store")
            return None
        relay = Relay(
            self.settings.kafka_bootstrap_servers,
            PUBLICATIONS,
            source=self.settings.cloudevents_source,
            topic_prefix=self.settings.topic_prefix,
            prepare=self.ensure_topics,
        )
        self.follow(relay)
        return relay

    async def ensure_topics(self) -> None:
        assert self.settings.kafka_bootstrap_servers
        await ensure_topics(
            self.settings.kafka_bootstrap_servers,
            tuple(self.settings.topic_prefix + name for name in TOPICS),
            self.settings.topic_partitions,
            self.settings.topic_replication_factor,
        )

    def start_handover_webhook(self) -> WebhookReader | None:
        settings = self.settings
        if not settings.handover_webhook_url:
            log.info("hand-over webhook: none configured (hand-overs go to Kafka only)")
            return None
        if not settings.handover_webhook_secret:
            raise ValueError("FEEDBACKLOOP_HANDOVER_WEBHOOK_SECRET is needed to sign hand-overs")
        signed = SignedWebhook(
            url=settings.handover_webhook_url,
            secret=settings.handover_webhook_secret,
            max_attempts=settings.handover_webhook_max_attempts,
            backoff_seconds=settings.handover_webhook_backoff_seconds,
        )
        webhook = WebhookReader(
            self.store, self.bus, HAND_OVER_WEBHOOK, signed, source=settings.cloudevents_source
        )
        self.follow(webhook)
        log.info("hand-over webhook: delivering to %s", settings.handover_webhook_url)
        self.start_digest_webhook()  # the weekly digest's posts take the same route (W123)
        return webhook

    def start_digest_webhook(self) -> WebhookReader | None:
        """The weekly digest's posts go to the hand-over webhook too, signed the same way
        (SPEC W123), when one is configured."""
        settings = self.settings
        if not settings.handover_webhook_url or not settings.handover_webhook_secret:
            return None
        signed = SignedWebhook(
            url=settings.handover_webhook_url,
            secret=settings.handover_webhook_secret,
            max_attempts=settings.handover_webhook_max_attempts,
            backoff_seconds=settings.handover_webhook_backoff_seconds,
        )
        webhook = WebhookReader(
            self.store, self.bus, DIGEST_WEBHOOK, signed, source=settings.cloudevents_source
        )
        self.follow(webhook)
        return webhook

    def digest_routes(self) -> list[str]:
        """Where a digest's posts go (W124): the topic when Kafka is configured (the relay
        publishes it from the store) and the hand-over webhook when one is; none says so."""
        settings, routes = self.settings, []
        if settings.kafka_bootstrap_servers:
            routes.append(f"kafka:{settings.topic_prefix}{topics.DIGEST_POSTED}")
        if settings.handover_webhook_url and settings.handover_webhook_secret:
            routes.append(f"webhook:{settings.handover_webhook_url}")
        return routes

    def digest_builder(self) -> DigestBuilder:
        """What the scheduler calls with ``BuildDigest(week, now)`` (issue 9)."""
        return DigestBuilder(
            self.store,
            self.bus,
            self.pool,
            instance=self.settings.cloudevents_source,
            routes=self.digest_routes(),
            public_url=self.settings.public_url,
            page_bound=self.settings.digest_page_bound,
            wait_seconds=max(self.settings.read_wait_seconds, 60.0),
        )

    def inbound_consumer(self) -> InboundConsumer:
        return InboundConsumer(
            self.bus,
            self.store,
            self.pool,
            INBOUND_SUBSCRIPTIONS,
            bootstrap=self.settings.kafka_bootstrap_servers or "localhost:9092",
            group_id=self.settings.inbound_group_id,
            topic_prefix=self.settings.topic_prefix,
            prepare=self.ensure_topics,
        )

    async def start_inbound(self) -> InboundConsumer | None:
        if not self.settings.kafka_bootstrap_servers:
            log.warning("inbound: off (no KAFKA_BOOTSTRAP_SERVERS): commands come over HTTP only")
            return None
        consumer = self.inbound_consumer()
        self.supervisor.start("inbound", lambda: consumer.run(self.stop))
        self.consumer = consumer
        return consumer

    def proposal_generator(self, environ: Mapping[str, str] | None = None) -> ProposalGenerator:
        """What the scheduler calls with ``RaiseProposals(date, now)`` (SPEC C42); its
        settings are read afresh at each run (C46, C47: reloadable)."""
        return ProposalGenerator(
            self.store,
            self.bus,
            self.pool,
            settings=lambda: LearningSettings.from_environ(
                os.environ if environ is None else environ
            ),
            wait_seconds=max(self.settings.read_wait_seconds, 60.0),
        )

    def new_scheduler(self) -> Scheduler:
        """The scheduler: it hands each order that falls due to the nightly runner, the
        digest builder or the proposal generator (issues 9, 10)."""
        nights = self.nightly_runner()
        return Scheduler(
            self.pool,
            nights,
            self.digest_builder(),
            proposals=self.proposal_generator(),
            night_hour=nights.settings.start_hour_utc if nights.settings.enabled else None,
            tick_seconds=self.settings.scheduler_tick_seconds,
        )

    def start_scheduler(self) -> Scheduler:
        scheduler = self.scheduler = self.new_scheduler()
        self.supervisor.start(SCHEDULER, lambda: scheduler.run(self.stop))
        log.info("scheduler: ticking every %.0f s", self.settings.scheduler_tick_seconds)
        return scheduler

    def running(self) -> list[str]:
        """The readers this process runs."""
        return [
            *self.readers,
            *(["inbound"] if self.consumer else []),
            *([SCHEDULER] if self.scheduler else []),
        ]

    async def health(self, only: list[str] | None = None) -> list[ReaderHealth]:
        """How each reader stands (all known ones, or ``only`` these), from PostgreSQL."""
        head = await asyncio.to_thread(self.store.recorder.max_notification_id) or 0
        max_lag = self.settings.reader_max_lag
        max_silence = self.settings.reader_max_silence_seconds
        of_log = None if only is None else [n for n in only if n not in ("inbound", SCHEDULER)]
        report = await readers_health(
            self.pool, head, only=of_log, max_lag=max_lag, max_silence=max_silence
        )
        if self.settings.kafka_bootstrap_servers and (only is None or "inbound" in only):
            report.append(
                await inbound_health(
                    self.pool,
                    self.settings.inbound_group_id,
                    max_lag=max_lag,
                    max_silence=max_silence,
                )
            )
        if only is None or SCHEDULER in only:
            scheduler = await scheduler_health(self.pool, max_silence=max_silence)
            if scheduler is not None:
                report.append(scheduler)
            elif only is not None:
                report.append(
                    ReaderHealth(SCHEDULER, 0, 0, 0, "never started", None, ["never started"])
                )
        for reader in report:  # this process knows better whether its own tasks still run
            task = self.supervisor.tasks.get(reader.name)
            if task is not None and not task.alive:
                reader.problems.insert(0, "its task has ended")
        return report

    async def readiness(self) -> dict[str, Any]:
        """``/readyz``'s body: whether this process can serve, and what degrades the
        instance (the gauges of the same are read by ``read_model_gauges.refresh``)."""
        await self.pool.fetchval("SELECT 1")
        report = await self.health(only=self.running())
        return readiness_body(report, await instance_incidents(self.pool))

    def app(self, lifespan: Any = None) -> FastAPI:
        wait = self.settings.read_wait_seconds
        http = Http(self.bus, self.pool, self.keys, wait, self.positions)
        routers = [
            feedback_routes(http),
            report_routes(http),
            artifact_routes(http),
            eval_routes(http, self.case_runner()),
            digest_routes(http),
            night_routes(http),
            learning_routes(http),
            dataset_routes(http, self.store),
            event_routes(http, INBOUND_SUBSCRIPTIONS),
            appraisal_routes(http),
        ]
        app = create_app(http, routers, lifespan=lifespan)
        app.add_middleware(TraceContext)
        self.untrace = configure_telemetry(app)  # only with OTEL_EXPORTER_OTLP_ENDPOINT set

        @app.get("/readyz", include_in_schema=False)
        async def readyz() -> JSONResponse:
            """Ready means "can serve" (``/healthz`` stays liveness): 503 only without the
            database or with a reader this process runs that is dead, waiting or lagging.
            Parked events anywhere in the instance make it *degraded* — 200, with
            ``degraded`` and the reasons per reader in the body (services/processes/health.py)."""
            try:
                report = await self.readiness()
            except Exception as error:
                if not postgresql_away(error):
                    raise
                # The driver's message may name the database's host: the unauthenticated
                # body says only the kind of error, the log the whole of it.
                log.warning("readyz: PostgreSQL unreachable: %s: %s", type(error).__name__, error)
                problem = f"unreachable: {type(error).__name__}"
                body = {"status": "not ready", "database": problem}
                return JSONResponse(body, status_code=503)
            return JSONResponse(report, status_code=200 if report["status"] == "ok" else 503)

        return app

    def case_runner(self) -> CaseRunner:
        agent = self.settings.agent
        client = agent_client_from_settings(agent.kind, agent.url, agent.api_key, agent.model)
        if client is None:
            log.info("evals: no agent configured (FEEDBACKLOOP_AGENT_URL): runs will say so")
        return CaseRunner(
            self.store,
            self.bus,
            client,
            default_model=agent.model,
            thresholds=self.settings.thresholds(),
            reply_timeout=agent.timeout_seconds,
        )

    def nightly_runner(self, environ: Mapping[str, str] | None = None) -> NightlyRunner:
        """The nightly runner the scheduler calls with ``PlanNight`` (issue 9). Its settings
        are read tolerantly (SPEC W86); the key store afresh for each confirmer check (W99)."""
        nightly = NightlySettings.from_environ(os.environ if environ is None else environ)
        if nightly.unparsed:
            log.warning("nightly: default used for %s (did not parse)", ", ".join(nightly.unparsed))
        settings = self.settings
        return NightlyRunner(
            self.store,
            self.bus,
            self.pool,
            self.case_runner(),
            nightly,
            # On the embedded default without configured keys, the development key is the
            # only one there is; otherwise the configured keys, read afresh for each check.
            (lambda: self.keys)
            if self.dev_key
            else (lambda: read_key_store(settings.api_keys, settings.api_keys_file)),
            read_wait_seconds=max(settings.read_wait_seconds, 60.0),
        )


def build_broker(bootstrap: str) -> KafkaBroker:
    broker = KafkaBroker(bootstrap, client_id="feedbackloop")
    declare_publishers(broker)  # derived from the declarations, as in the AsyncAPI document
    return broker


def load_keys(settings: Settings) -> tuple[KeyRing, str | None]:
    """Configured keys; on the embedded default with none configured, a development key."""
    keys = KeyRing.load(settings.api_keys, settings.api_keys_file)
    if len(keys) or not settings.embedded:
        return keys, None
    path = settings.data_dir / "dev-api-key.json"
    if not path.exists():
        key, entry = new_key("dev", "developer", list(SCOPES))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"key": key, "entry": entry}))
        path.chmod(0o600)
    saved = json.loads(path.read_text())
    return KeyRing([ApiKeyEntry.model_validate(saved["entry"])]), str(saved["key"])


@asynccontextmanager
async def serving(runtime: Runtime, everything: bool) -> AsyncIterator[None]:
    """The HTTP server's lifespan. With ``everything``, one process runs it all: API, read
    models, hand-over webhook, relay and inbound consumers. The runtime is closed here, at
    the server's shutdown, because uvicorn re-raises SIGTERM once it has shut down."""
    broker = None
    try:
        await runtime.start_grpc()  # the API's processes answer gRPC too (C22)
        if everything:
            runtime.start_projections()
            runtime.start_handover_webhook()
            await runtime.start_relay()
            broker = await runtime.start_inbound()
            runtime.start_scheduler()
        yield
    finally:
        if broker is not None:
            await broker.stop()
        await runtime.close()
