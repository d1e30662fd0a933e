"""A week's wrong-answer reports of one agent, appraised by their kinds alone: the line a weekly
digest closes each agent's post with (SPEC W125). The digests context is handed this reading by
the composition root (``services.processes.bootstrap``) and imports none of appraisal.

It sees only what the digest holds, the reports by kind: no feedback, runs, reach or charter,
and says so. The signs are the contribution table's and the label the appraisal's own.
"""

from collections.abc import Mapping
from datetime import datetime

from services.appraisal.charter import EMPTY
from services.appraisal.facts import ReportFact
from services.appraisal.labels import label, valence
from services.appraisal.outcomes import CONTRIBUTIONS, of_report


def reports_only_line(counts: Mapping[str, int], agent: str, at: datetime) -> str:
    """``counts`` (reports by kind) read as signed outcomes and labelled, as of ``at``."""
    reports = [
        ReportFact(kind, None, agent, kind, False, at, "New")
        for kind, count in counts.items()
        for _ in range(count)
    ]
    errors = [error for fact in reports for error in of_report(fact, EMPTY, CONTRIBUTIONS, at)]
    shown = str(valence(errors)) or "nothing signed"
    return f"Appraisal (from reports only): {label(errors, EMPTY).value}, {shown}"
