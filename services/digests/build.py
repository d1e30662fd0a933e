"""The digest of a week as a pure function of its facts (SPEC W115–W122, W135).

Nothing here reads a clock, a table or the network: the builder reads the facts (the week's
and the week before's submitted reports, every eval case), hands them in, and stores what
comes out, so the same facts always give the same digest and every edge is a unit test.
"""

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol
from uuid import UUID

from contracts.digests import AgentTable, DigestTables, Health, ModelTable, RunnerHealth, Trend
from contracts.runners import RunnerKey
from contracts.weeks import end_of, previous, start_of
from projections.inbox import UNKNOWN_AGENT  # a report without a block (W38, W122)

UNKNOWN_AGENT_ID = "unknown-agent"
UNKNOWN_MODEL = "(unknown model)"
NO_KIND = "(no kind)"
INFORMATIONAL_KINDS = ("retrieval",)  # W135: filed as bugs already; counted, marked apart


class AppraisesReports(Protocol):
    """How one agent's reports of the week read as an appraisal, from their kinds alone (the
    line that closes its post): the appraisal context's reading, handed in by the composition
    root (``services.appraisal.weekly.reports_only_line``)."""

    def __call__(self, counts: Mapping[str, int], agent: str, at: datetime) -> str: ...


@dataclass(frozen=True)
class ReportFact:
    """A submitted report as the digest needs it: the facts parsed once at the door."""

    report_id: UUID
    submitted_at: datetime
    kind: str | None
    agent: str
    model: str | None


@dataclass(frozen=True)
class CaseFact:
    """An eval case: where it came from, whose it is, and the verdict of its last run of each
    runner (empty: never run; SPEC W58)."""

    ref: str
    agent: str
    source: UUID
    verdicts: Mapping[RunnerKey, bool]


def agent_id_of(agent: str) -> str:
    """The agent path with every ``/`` as ``_`` (as eval cases name it, SPEC W43); the
    unknown agent gets a name that is a plain path segment."""
    return UNKNOWN_AGENT_ID if agent == UNKNOWN_AGENT else agent.replace("/", "_")


def in_week(week: str, reports: Iterable[ReportFact]) -> list[ReportFact]:
    """The reports submitted in ``[Monday 00:00 UTC, next Monday 00:00 UTC)`` (SPEC §3.9)."""
    start, end = start_of(week), end_of(week)
    return [r for r in reports if start <= r.submitted_at < end]


def build(
    week: str, reports: Sequence[ReportFact], cases: Sequence[CaseFact], *, bound: int
) -> DigestTables:
    """W115: the week's tables from the reports read (this week's and the week before's, at
    most ``bound`` of them, newest first) and the eval cases.

    A full page means older reports may be missing: the digest says it is truncated and its
    counts are lower bounds (W112)."""
    this_week = in_week(week, reports)
    week_before = in_week(previous(week)[0], reports)
    before = Counter(r.agent for r in week_before)
    agents = sorted({r.agent for r in this_week})
    return DigestTables(
        week=week,
        reports=len(this_week),
        truncated=len(reports) >= bound,
        bound=bound,
        agents=[
            agent_table(agent, [r for r in this_week if r.agent == agent], before[agent], cases)
            for agent in agents
        ],
        models=model_tables(this_week),
    )


def agent_table(
    agent: str, reports: Sequence[ReportFact], before: int, cases: Sequence[CaseFact]
) -> AgentTable:
    counts = kind_counts(reports)
    sources = {r.report_id for r in reports}
    mine = [case for case in cases if case.agent == agent]
    return AgentTable(
        agent=agent,
        agent_id=agent_id_of(agent),
        total=len(reports),
        counts=counts,
        informational={kind: counts[kind] for kind in INFORMATIONAL_KINDS if kind in counts},
        models=sorted({r.model for r in reports if r.model}),  # W117
        trend=Trend(previous=before, change=len(reports) - before),  # W118
        cases_lifted=sorted(case.ref for case in cases if case.source in sources),  # W119
        health=health(mine),
    )


def health(cases: Sequence[CaseFact]) -> Health:
    """W120 with W58: like with like. The night's figure counts each case's last run by a
    night (the night runs as each case's confirmer, so its figure is the night's whatever the
    ``ranBy``); a person's runs on demand make a figure of that person's own. The headline
    numbers are the night's: the one runner that runs every confirmed case, week after week
    (decisions D53)."""
    counted: dict[tuple[str, str | None], list[bool]] = {}
    for case in cases:
        nights = [(key, ok) for key, ok in case.verdicts.items() if key.runner == "night"]
        if nights:  # a reconfirmed case has a night run under each confirmer: the newest rules
            counted.setdefault(("night", None), []).append(nights[-1][1])
        for key, ok in case.verdicts.items():
            if key.runner == "manual":
                counted.setdefault(("manual", key.ran_by), []).append(ok)
    ordered = sorted(counted.items(), key=lambda kv: (kv[0][0] != "night", kv[0][1] or ""))
    people = [ran_by for (runner, ran_by), _ in ordered if runner == "manual"]
    runners = [
        RunnerHealth(
            runner=runner, ran_by=None if ran_by is None else stand_in(people, ran_by),
            with_run=len(oks), passed=sum(oks),
        )
        for (runner, ran_by), oks in ordered
    ]  # fmt: skip
    night = counted.get(("night", None), [])
    return Health(with_run=len(night), passed=sum(night), runners=runners)


def stand_in(people: Sequence[str | None], person: str) -> str:
    """Who ran cases on demand, as the digest names them: ``someone``, or ``someone (2)``
    when several did, never their id (decisions D135). The digest is posted to GitHub and to
    webhooks, where an erasure cannot reach; each person keeps a figure of their own (W58)."""
    if len(people) == 1:
        return "someone"
    return f"someone ({people.index(person) + 1})"


def model_tables(reports: Sequence[ReportFact]) -> list[ModelTable]:
    """W121: per model, across agents; a report naming no model is counted, not dropped."""
    models = sorted({r.model or UNKNOWN_MODEL for r in reports})
    tables = []
    for model in models:
        mine = [r for r in reports if (r.model or UNKNOWN_MODEL) == model]
        tables.append(ModelTable(model=model, total=len(mine), counts=kind_counts(mine)))
    return tables


def kind_counts(reports: Iterable[ReportFact]) -> dict[str, int]:
    """W116: by kind, in a stable order; a report without a kind is counted under ``NO_KIND``."""
    return dict(sorted(Counter(r.kind or NO_KIND for r in reports).items()))


def as_text(table: AgentTable, week: str, *, truncated: bool, appraise: AppraisesReports) -> str:
    """The agent's digest as a person reads it: the message of the post (W125)."""
    lines = [f"Wrong answers — {table.agent}, week {week}: {table.total} report(s)"]
    if truncated:
        lines.append("(truncated: the read filled its page bound; counts are lower bounds)")
    for kind, count in table.counts.items():
        note = " (informational: filed as bugs already)" if kind in table.informational else ""
        lines.append(f"- {kind}: {count}{note}")
    sign = "+" if table.trend.change >= 0 else ""
    lines.append(
        f"Trend: {sign}{table.trend.change} against {table.trend.previous} the week before"
    )
    lines.append(f"Models: {', '.join(table.models) or 'none named'}")
    lifted = ", ".join(table.cases_lifted) or "none"
    lines.append(f"Eval cases lifted this week: {lifted}")
    lines.append(health_line(table.health))
    lines.append(appraise(table.counts, table.agent, start_of(week)))
    return "\n".join(lines)


def health_line(health: Health) -> str:
    """The health line, one figure per runner, each saying whose it is (W58, W120): the night,
    or someone on demand (never a person's id, decisions D135)."""
    figures = [
        f"{'the night' if r.runner == 'night' else f'{r.ran_by} on demand'}: {r.passed} of "
        f"{r.with_run}"
        for r in health.runners
    ]
    return f"Health (cases passed of those with a last run): {'; '.join(figures) or 'no runs'}"
