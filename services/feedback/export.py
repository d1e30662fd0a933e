"""Feedback as an export (decisions D210): the rows and filters of ``GET /factory/feedback``,
read by its own query a page at a time (``services.edge.exports``)."""

from projections.feedback_list import count_feedback, list_feedback
from services.edge.exports import PAGE, Export, Items
from services.followers.reader import Connection

FIELDS = (
    "feedbackId", "projectId", "subjectKind", "subjectRef", "kind", "rating", "commentRef",
    "correctedArtifactRef", "givenBy", "givenAt",
)  # fmt: skip


def feedback_export(
    tenant_id: str,
    *,
    subject_kind: str | None = None,
    subject_ref: str | None = None,
    kind: str | None = None,
) -> Export:
    """The tenant's feedback under the list's filters, newest first."""

    async def page(conn: Connection, before: int | None) -> Items:
        found = await list_feedback(
            conn, tenant_id, subject_kind=subject_kind, subject_ref=subject_ref, kind=kind,
            before=before, limit=PAGE,
        )  # fmt: skip
        return found.items, found.next_before

    async def count(conn: Connection) -> int:
        return await count_feedback(
            conn, tenant_id, subject_kind=subject_kind, subject_ref=subject_ref, kind=kind
        )

    return Export("feedback", FIELDS, page, count)
