"""The nightly context, declared once: what the runtime runs of it."""

import logging

from contracts.agent_changes import AgentChanged
from contracts.nights import FinishNight, FinishNightCase, PlanTenantNight, RecordNightConversation
from projections.nights import Nights
from services.declaration import Command, Context, Given, Order
from services.nightly.agent_changes import change_created, record_agent_change
from services.nightly.api import night_routes
from services.nightly.handlers import (
    finish_night,
    finish_night_case,
    plan_tenant_night,
    planned_id,
    record_night_conversation,
)
from services.nightly.runner import NightlyRunner
from services.nightly.settings import NightlySettings
from services.nightly.subscriptions import SUBSCRIPTIONS
from services.permissions.rules import AGENT_CHANGERS, OPERATOR
from services.scheduling.orders import PlanNight

log = logging.getLogger(__name__)


def nightly_runner(given: Given) -> NightlyRunner:
    """What the scheduler hands ``PlanNight``. Its settings are read tolerantly (SPEC W86);
    each confirmer check asks the register in the store (W99, decisions D103)."""
    nightly = NightlySettings.from_environ(given.environ)
    if nightly.unparsed:
        log.warning("nightly: default used for %s (did not parse)", ", ".join(nightly.unparsed))
    return NightlyRunner(
        given.store,
        given.bus,
        given.pool,
        given.case_runner,
        nightly,
        read_wait_seconds=given.scheduled_wait_seconds,
    )


NIGHTLY = Context(
    "nightly",
    commands=(
        Command(PlanTenantNight, plan_tenant_night, permits=OPERATOR, creates=planned_id),
        Command(RecordNightConversation, record_night_conversation, permits=OPERATOR),
        Command(FinishNightCase, finish_night_case, permits=OPERATOR),
        Command(FinishNight, finish_night, permits=OPERATOR),
        # A change of an agent: its cases are re-run first at the next night (D240, D241).
        Command(AgentChanged, record_agent_change, permits=AGENT_CHANGERS, creates=change_created),
    ),
    routes=lambda http, given: night_routes(http),
    read_models=(Nights(),),  # the agents' changes run on its reader (D243)
    subscriptions=SUBSCRIPTIONS,
    orders=(Order(PlanNight, nightly_runner),),
)
