"""The digests context, declared once: what the runtime runs of it.

A post closes each agent's digest with an appraisal line, which is the appraisal context's
reading: the composition root hands it in (``appraise``), so this context imports none of
appraisal."""

from fastapi import APIRouter

from contracts.digests import BuildWeeklyDigest, PostWeeklyDigest, RecordDigestDelivery
from contracts.intake import RecordTriage
from projections.digests import Digests
from services.declaration import Command, Context, Given, Order
from services.digests.api import digest_routes, standing_issue_routes
from services.digests.build import AppraisesReports
from services.digests.builder import DigestBuilder
from services.digests.handlers import (
    build_weekly_digest,
    created_by,
    post_weekly_digest,
    record_digest_delivery,
    record_triage,
    triage_created_by,
)
from services.digests.published import PUBLICATIONS
from services.digests.webhook import DIGEST_WEBHOOK
from services.edge.http import Http
from services.permissions.rules import OPERATOR, SERVICE_ONLY
from services.scheduling.orders import BuildDigest


def digest_builder(given: Given) -> DigestBuilder:
    """What the scheduler hands ``BuildDigest(week, now)``."""
    settings = given.settings
    return DigestBuilder(
        given.store,
        given.bus,
        given.pool,
        instance=settings.cloudevents_source,
        routes=given.digest_routes,
        public_url=settings.public_url,
        page_bound=settings.digest_page_bound,
        wait_seconds=given.scheduled_wait_seconds,
    )


def routes(http: Http) -> APIRouter:
    """The digests' routes and the standing-issue ledger's."""
    router = APIRouter()
    router.include_router(digest_routes(http))
    router.include_router(standing_issue_routes(http))
    return router


def digests(appraise: AppraisesReports) -> Context:
    """The context, its posts closing with ``appraise``'s line."""
    return Context(
        "digests",
        commands=(
            Command(BuildWeeklyDigest, build_weekly_digest, permits=OPERATOR, creates=created_by),
            Command(PostWeeklyDigest, post_weekly_digest(appraise), permits=OPERATOR),
            Command(RecordDigestDelivery, record_digest_delivery, permits=SERVICE_ONLY),
            Command(RecordTriage, record_triage, permits=SERVICE_ONLY, creates=triage_created_by),
        ),
        routes=lambda http, given: routes(http),
        read_models=(Digests(),),
        publications=PUBLICATIONS,
        orders=(Order(BuildDigest, digest_builder),),
        webhooks=(DIGEST_WEBHOOK,),
    )
