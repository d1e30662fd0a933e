"""The two paid passes: an intervention opinion and a quarantined appraiser (SPEC M43, M44).

Both run only on request, each under a cap on the agent calls it may make (its cost), and
through the same agent client eval runs use (handed in by the caller; its type is the
Protocol below, so this context imports no other). Without a configured model, nothing is
asked and nothing recorded, and the report says so (as SPEC W69 says for runs).

- opinion: each intervention (a steer, a denial, an owner stop: the ``intervention`` channel)
  is put to the model as a question — did it matter? — with the run id and the intervention's
  cite alone. It is not the seed's counterfactual probe (M44): that replays the run from its
  recorded prefix without the intervention, and this service holds no transcript of a run
  (only its input and output artifacts), so nothing is replayed. Its one-word answer
  (mattered, redundant, inconclusive) is recorded as an ``opinion`` and counted, and never
  fills ``controllable``: it changes no label (decisions D153). Edits and other channels are
  not asked about: skipped, which costs nothing and is counted apart from inconclusive.
- appraiser: one call per run, numbers only — the run's signed outcomes as channel, sign and
  agency, never a text — asking for at most one further signed error. A malformed reply gets
  one retry, and the retried call counts once against the cap.

What either records is numbers and words from closed sets, on the ``appraisal`` channel
(``RecordPassResults``): no text a model wrote is kept or shown.
"""

import json
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from contracts.agent import AgentReply, AgentRequest
from contracts.appraisal_records import PassResult, RecordPassResults
from services.appraisal.outcomes import Channel, GoalError

OPINIONS = ("mattered", "redundant", "inconclusive")
AGENCIES = ("self", "owner", "other", "world")


class Replier(Protocol):
    """The agent client eval runs use (``AgentClient``), as far as a pass needs it."""

    needs_model: bool

    async def reply(self, request: AgentRequest) -> AgentReply: ...


@dataclass(frozen=True)
class RunToPass:
    run_id: str
    errors: tuple[GoalError, ...]


@dataclass
class PassReport:
    kind: str
    ran: bool = False
    said: str = ""
    calls: int = 0
    recorded_runs: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    left_at_cap: int = 0  # runs not passed because the cap was reached

    def as_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "ran": self.ran,
            "said": self.said,
            "calls": self.calls,
            "recordedRuns": self.recorded_runs,
            "counts": dict(self.counts),
            "leftAtCap": self.left_at_cap,
        }


Record = Callable[[RecordPassResults], Awaitable[object]]
NO_MODEL = "no model configured (FEEDBACKLOOP_AGENT_URL / _MODEL): nothing asked, nothing recorded"


def configured(client: Replier | None, model: str | None) -> bool:
    return client is not None and (model is not None or not client.needs_model)


def request(prompt: str, run_id: str, model: str | None) -> AgentRequest:
    return AgentRequest.model_validate(
        {"prompt": prompt, "threadRef": f"appraisal/{run_id}", "submitter": "appraisal",
         "requestedModel": model}
    )  # fmt: skip


async def ask_intervention_opinions(
    runs: Sequence[RunToPass], client: Replier | None, model: str | None, cap: int,
    record: Record,
) -> PassReport:  # fmt: skip
    """An opinion per intervention, at most ``cap`` calls; recorded, never a label's input
    (no replay: decisions D153)."""
    report = PassReport("opinion")
    if client is None or not configured(client, model):
        report.said = NO_MODEL
        return report
    report.ran = True
    for index, run in enumerate(runs):
        asked = [e for e in run.errors if e.channel is Channel.intervention and e.sign < 0]
        if len(asked) > cap - report.calls:
            report.left_at_cap = len(runs) - index
            break
        results: list[PassResult] = []
        answered_by = model or ""
        for error in run.errors:
            if error not in asked:
                if error.sign < 0:
                    results.append(PassResult(cite=error.cite, result="skipped"))
                continue
            prompt = (
                f"intervention opinion (no transcript, no replay). run {run.run_id}. "
                f"intervention {error.cite} (sign {error.sign:+.1f}). Did it matter? Answer "
                "one word: mattered, redundant or inconclusive."
            )
            reply = await client.reply(request(prompt, run.run_id, model))
            report.calls += 1
            answered_by = reply.model_name
            word = reply.text.strip().split()[0].strip(".").lower() if reply.text.strip() else ""
            results.append(
                PassResult(cite=error.cite, result=word if word in OPINIONS else "inconclusive")
            )
        report.counts.update(r.result for r in results)
        if results:
            await record(RecordPassResults(run_id=run.run_id, kind="opinion", model=answered_by or
                                           "none", results=results))  # fmt: skip
            report.recorded_runs += 1
    report.said = f"{report.calls} intervention opinion(s) asked, no label changed" + (
        f"; stopped at the cap of {cap}: {report.left_at_cap} run(s) left" if report.left_at_cap
        else ""
    )  # fmt: skip
    return report


def brief(run: RunToPass) -> str:
    """The appraiser's input: numbers only (M17's spirit; the seed's quarantine)."""
    signed = Counter((e.channel.value, e.agency.value, e.sign) for e in run.errors)
    lines = [
        f"{channel} {agency} {sign:+.1f} x{n}" for (channel, agency, sign), n in signed.items()
    ]
    return (
        "quarantined appraisal. signed outcomes (channel agency sign count):\n"
        + ("\n".join(sorted(lines)) or "none")
        + '\nReply JSON only: {"sign": -1.0..1.0, "agency": "self|owner|other|world", '
        '"visible": true|false} for one further signed error, or {"nothing": true}.'
    )


def verdict(text: str) -> PassResult | None:
    """The appraiser's reply as a result, or None when malformed."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    if data.get("nothing") is True:
        return PassResult(cite="appraiser", result="nothing")
    sign, agency, visible = data.get("sign"), data.get("agency"), data.get("visible", False)
    if (
        not isinstance(sign, int | float) or isinstance(sign, bool) or not -1.0 <= sign <= 1.0
        or sign == 0 or agency not in AGENCIES or not isinstance(visible, bool)
    ):  # fmt: skip
        return None
    return PassResult(cite="appraiser", result="found", sign=float(sign), agency=agency,
                      visible=visible)  # fmt: skip


async def appraiser(
    runs: Sequence[RunToPass], client: Replier | None, model: str | None, cap: int,
    record: Record,
) -> PassReport:  # fmt: skip
    """SPEC M44's quarantined appraiser: one call per run (a retry counts once), ``cap`` runs."""
    report = PassReport("appraiser")
    if client is None or not configured(client, model):
        report.said = NO_MODEL
        return report
    report.ran = True
    for index, run in enumerate(runs):
        if report.calls >= cap:
            report.left_at_cap = len(runs) - index
            break
        report.calls += 1  # a retried appraisal still counts once
        result, answered_by = None, model or ""
        for _ in range(2):
            reply = await client.reply(request(brief(run), run.run_id, model))
            answered_by = reply.model_name
            if (result := verdict(reply.text)) is not None:
                break
        if result is None:
            report.counts["malformed"] += 1
            continue
        report.counts[result.result] += 1
        await record(RecordPassResults(run_id=run.run_id, kind="appraiser",
                                       model=answered_by or "none", results=[result]))  # fmt: skip
        report.recorded_runs += 1
    report.said = f"{report.calls} appraisal(s)" + (
        f"; stopped at the cap of {cap}: {report.left_at_cap} run(s) left" if report.left_at_cap
        else ""
    )  # fmt: skip
    return report
