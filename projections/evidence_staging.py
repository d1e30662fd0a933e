"""The evidence clusters' feedback, made ahead by a rebuild's worker processes (decisions D70).

The clusters apply ``Feedback.Recorded`` in log order: feedback waits for its subject, and
joins its cluster when the subject is known. What the clusters take of an event, though (a
``Said``: its subject's key, its item, whether it adds a task), needs nothing but the event.
So a rebuild's worker processes, which decode every piece of feedback for the read models that
load it in any order, make each ``Said`` as well (``stage``) and send it back; the rebuild's
shared pass hands them, in log order, to the clusters' ``apply``, which takes them in place of
the events as it takes the events live (``services.projecting.staged``).
"""

from collections.abc import Sequence

from projections import events as ev
from projections.evidence_items import said, says_wrong
from services.followers.reader import Positioned


class FeedbackStaging:
    """A ``projections.read_model.Staging`` of the clusters' feedback."""

    handles = (ev.FEEDBACK_RECORDED,)

    def stage(self, batch: Sequence[Positioned]) -> list[Positioned]:
        """What the clusters take of ``batch``: the feedback that says something is wrong."""
        return [Positioned(p.position, said(p.event)) for p in batch if says_wrong(p.event)]
