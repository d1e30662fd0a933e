"""The Inbox's reports as an export, each with its lifecycle (decisions D210): the rows and
filters of ``GET /factory/reports/inbox``, read by its own query a page at a time
(``services.edge.exports``), each page's lifecycles in one more query."""

from uuid import UUID

from projections.inbox import InboxFilter, count_inbox, lifecycles, list_inbox
from services.edge.exports import PAGE, Export, Items
from services.followers.reader import Connection

FIELDS = (
    "reportId", "reporter", "category", "status", "message", "sidePanel.thread",
    "sidePanel.message", "extraContext", "parsed.kind", "parsed.agent", "parsed.model",
    "parsed.addressee", "handOver.handedOver", "handOver.attempts", "handOver.failed",
    "handOver.lastError", "draftedAt", "submittedAt", "review.reviewedBy", "review.reviewedAt",
    "review.change", "review.link", "review.reason", "lifecycle",
)  # fmt: skip


def reports_export(tenant_id: str, where: InboxFilter) -> Export:
    """The tenant's Inbox under ``where``, newest change first, with every report's steps."""

    async def page(conn: Connection, before: int | None) -> Items:
        items, next_before = await list_inbox(conn, tenant_id, where, before=before, limit=PAGE)
        steps = await lifecycles(conn, [UUID(item["reportId"]) for item in items])
        return [{**item, "lifecycle": steps[UUID(item["reportId"])]} for item in items], next_before

    async def count(conn: Connection) -> int:
        return await count_inbox(conn, tenant_id, where)

    return Export("reports", FIELDS, page, count)
