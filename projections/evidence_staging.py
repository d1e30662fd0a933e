"""The evidence clusters' feedback, made ahead by a rebuild's worker processes (decisions D70).

The clusters apply ``Feedback.Recorded`` in log order: feedback waits for its subject, and
joins its cluster when the subject is known. What the clusters take of an event, though (a
``Said``: its subject's key, its item, whether it adds a task), needs nothing but the event.
So a rebuild's worker processes, which decode every piece of feedback for the read models that
load it in any order, make each ``Said`` as well and copy it, with its position, into a table
of the fresh schema (``stage``); the rebuild's shared pass reads them back page by page
(``staged``) and the clusters' ``apply`` takes them in log order in place of the events, as it
takes the events live. The shared pass never decodes feedback; the table goes before the
read model is swapped in (``services.projecting.staged``).
"""

from collections.abc import Sequence

from projections import events as ev
from projections.evidence_items import Said, said, says_wrong
from services.followers.reader import Connection, Positioned

COLUMNS = ("position", "tenant_id", "evidence_id", "subject_kind", "subject_ref", "item",
           "adds_task")  # fmt: skip


class FeedbackStaging:
    """A ``projections.read_model.Staging`` of the clusters' feedback."""

    handles = (ev.FEEDBACK_RECORDED,)
    table = "staged_feedback"

    def ddl(self, schema: str) -> str:
        # Read back a page's range at a time: by position.
        return f"""
        CREATE TABLE IF NOT EXISTS {schema}.{self.table} (
            position bigint NOT NULL, tenant_id text NOT NULL, evidence_id text NOT NULL,
            subject_kind text NOT NULL, subject_ref text NOT NULL, item text NOT NULL,
            adds_task boolean NOT NULL);
        CREATE INDEX IF NOT EXISTS {self.table}_at ON {schema}.{self.table} (position);
        """

    async def stage(self, conn: Connection, schema: str, batch: Sequence[Positioned]) -> None:
        """In a worker process: what the clusters take of ``batch``, copied in."""
        rows = []
        for p in batch:
            if says_wrong(p.event):
                s = said(p.event)
                rows.append((p.position, s.tenant_id, s.evidence_id, s.subject_kind,
                             s.subject_ref, s.item, s.adds_task))  # fmt: skip
        if rows:
            await conn.copy_records_to_table(
                self.table, schema_name=schema, records=rows, columns=list(COLUMNS)
            )

    async def staged(
        self, conn: Connection, schema: str, after: int, upto: int, limit: int
    ) -> list[Positioned]:
        """The first ``limit`` that ``stage`` made of the positions after ``after`` up to
        ``upto``, in log order."""
        rows = await conn.fetch(
            f"SELECT {', '.join(COLUMNS)} FROM {schema}.{self.table} "
            "WHERE position > $1 AND position <= $2 ORDER BY position LIMIT $3",
            after,
            upto,
            limit,
        )
        return [Positioned(r[0], Said(*r[1:])) for r in rows]
