"""Retention (decisions D45): each day, for every tenant with a retention period, the data
keys of report text from months wholly older than the period are destroyed and the expiry
recorded (``Expiry.TextExpired``); comments' text (artifacts) of feedback given before those
months is deleted (decisions D75); read models are then rebuilt as after an erasure. Counts
and decisions stay: only the text reads as erased.

Keys are per person and month, so text lives between the period and one month more: on
2026-12-02 with 12 months, text of 2025-11 and before is erased, 2025-12's is kept.
"""

import logging
import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime

from contracts.privacy import ExpireText
from projections.feedback_list import comments_past
from services.bus.issued import Issued
from services.declaration import Given
from services.scheduling.orders import ExpireOldText
from services.store.artifacts import delete_artifacts

log = logging.getLogger(__name__)
SCHEDULER = "scheduler"


def first_month_kept(day: date, months: int) -> str:
    """The first month whose text a period of ``months`` keeps on ``day`` (``YYYY-MM``)."""
    index = day.year * 12 + (day.month - 1) - months
    return f"{index // 12:04d}-{index % 12 + 1:02d}"


def month_start(month: str) -> datetime:
    """The first instant of a ``YYYY-MM`` month, UTC."""
    year, number = month.split("-")
    return datetime(int(year), int(number), 1, tzinfo=UTC)


@dataclass
class RetentionRunner:
    given: Given

    async def __call__(self, order: ExpireOldText) -> None:
        destroyed = 0
        for tenant, months in sorted(self.given.settings.text_retention_months.items()):
            if months <= 0:
                continue
            command = ExpireText(before=first_month_kept(order.date, months))
            issued = Issued(command, tenant, SCHEDULER, f"{order.name}/{uuid.uuid4()}", order.now)
            outcome = await self.given.bus.execute(issued)
            destroyed += outcome.result["keysDestroyed"]
            # A comment's text is an artifact, not a sealed field: it is deleted once no
            # feedback of a kept month references it; the feedback stays, counted.
            old = await comments_past(self.given.pool, tenant, month_start(command.before))
            comments = await delete_artifacts(self.given.pool, tenant, old)
            if comments:
                log.info("%s: %s: %d comments past retention deleted", order.name, tenant, comments)
        if destroyed and self.given.rebuild is not None:
            log.info("%s: %d keys destroyed; rebuilding the read models", order.name, destroyed)
            await self.given.rebuild()


def retention_runner(given: Given) -> RetentionRunner:
    return RetentionRunner(given)
