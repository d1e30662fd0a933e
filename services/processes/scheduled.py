"""What the contexts are given to build their routes and scheduled work, and the scheduler
that hands each order to the context that carries it out."""

import logging
from collections.abc import Mapping
from functools import partial
from typing import Any

import asyncpg

from services.bus.command_bus import CommandBus
from services.declaration import Given
from services.edge.auth import KeyRing
from services.evals.agents import agent_client_from_settings
from services.evals.runs import CaseRunner
from services.evals.scoring import Thresholds
from services.processes.contexts import CONTEXTS, read_models
from services.processes.settings import Settings
from services.processes.webhooks import digest_routes
from services.projecting.rebuild import rebuild_many
from services.scheduling.orders import (
    AppraiseClosures,
    BuildDigest,
    ExpireOldText,
    PlanNight,
    RaiseProposals,
)
from services.scheduling.scheduler import Scheduler
from services.store.event_store import EventStore

log = logging.getLogger("feedbackloop")


def case_runner(settings: Settings, store: EventStore, bus: CommandBus) -> CaseRunner:
    """Runs one eval case against the configured agent: for the eval routes and the nights."""
    agent = settings.agent
    client = agent_client_from_settings(agent.kind, agent.url, agent.api_key, agent.model)
    if client is None:
        log.info("evals: no agent configured (FEEDBACKLOOP_AGENT_URL): runs will say so")
    return CaseRunner(
        store,
        bus,
        client,
        default_model=agent.model,
        thresholds={name: Thresholds(**rates) for name, rates in settings.evals_thresholds.items()},
        reply_timeout=agent.timeout_seconds,
    )


def given(
    settings: Settings,
    store: EventStore,
    bus: CommandBus,
    pool: asyncpg.Pool,
    keys: KeyRing,
    *,
    environ: Mapping[str, str],
) -> Given:
    return Given(
        store,
        bus,
        pool,
        keys,
        settings,
        environ,
        case_runner(settings, store, bus),
        partial(digest_routes, settings),
        # An erasure's and retention's rebuild: the erased words leave the live read models
        # even when a model parked something else (decisions D143).
        rebuild=lambda: rebuild_many(store, pool, read_models(), even_parked=True),
    )


def carried_out_by(given: Given, kind: type) -> Any:
    """What carries out orders of ``kind``, as the context that declares it builds it."""
    (order,) = [order for context in CONTEXTS for order in context.orders if order.kind is kind]
    return order.build(given)


def new_scheduler(given: Given, tick_seconds: float) -> Scheduler:
    """The scheduler: it hands each order that falls due to the context that declares it."""
    nights = carried_out_by(given, PlanNight)
    return Scheduler(
        given.pool,
        nights,
        carried_out_by(given, BuildDigest),
        proposals=carried_out_by(given, RaiseProposals),
        retention=carried_out_by(given, ExpireOldText),
        closures=carried_out_by(given, AppraiseClosures),
        night_hour=nights.settings.start_hour_utc if nights.settings.enabled else None,
        tick_seconds=tick_seconds,
    )
