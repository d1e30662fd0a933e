"""The label of a record, and its valence: one pure function each (SPEC M35–M44).

    any negative?
      ├─ yes → the most negative errors decide (M39); each is named:
      │          the appraiser's error (channel appraisal, a paid pass):
      │            agency other/world → anger (read before exposure, M36)
      │            else visible → embarrassment, otherwise distress (M37)
      │          an error a replayed counterfactual resolved (``controllable``; M44: the
      │          seed's probe, which this service does not make, decisions D153): mattered →
      │          regret, redundant → disappointment; any other → distress
      │        ties → the name that says more (SAYS_MORE);
      │        ≥2 probe-resolved self errors of one outcome on one goal → frustration, which
      │        only ever displaces a name that says less (M39). Positives are kept (M40).
      └─ no  → a positive delivery against a line the charter has → pride (M38), else neutral
    a compacted record → neutral, its valence partial (M43)

So the free readout (no pass ran: nothing probed, no appraiser error) can only read neutral,
distress or pride (M42); ``reachable`` enumerates it. With the paid passes this service runs,
the appraiser adds anger and embarrassment; regret, disappointment and frustration need a
replay, which nothing here fills. guilt, shame and excitement are members
with no rule yet: nothing produces them (``UNREACHABLE``), so adding a rule is the only change.
No field of any record carries a label (M35): it is computed here, every time it is read.
"""

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from contracts.goals import GoalKind
from services.appraisal.charter import Charter
from services.appraisal.outcomes import Agency, Channel, GoalError


class Label(StrEnum):
    neutral = "neutral"
    pride = "pride"
    distress = "distress"
    embarrassment = "embarrassment"
    anger = "anger"
    frustration = "frustration"
    regret = "regret"
    disappointment = "disappointment"
    # Kept for later, unreachable today (the seed: no producer yet). Adding the rule is the
    # only change they need: the wire format already has them.
    guilt = "guilt"  # adverse impact against a recorded commitment, confirmed after delivery
    shame = "shame"  # such harm as a pattern across runs: no cross-run aggregate yet
    excitement = "excitement"  # a positive predicted outcome: no anticipatory appraisal yet


UNREACHABLE = frozenset({Label.guilt, Label.shame, Label.excitement})
FREE = frozenset({Label.neutral, Label.distress, Label.pride})  # SPEC M42


# Exact ties go to the name that says more about what happened (M39), most first.
SAYS_MORE: tuple[Label, ...] = (
    Label.regret,
    Label.disappointment,
    Label.anger,
    Label.embarrassment,
    Label.frustration,
    Label.distress,
)


@dataclass(frozen=True)
class Valence:
    """SPEC M41: the two sums, never netted."""

    positive: float = 0.0
    negative: float = 0.0  # a magnitude: 2.0 reads "−2.0"

    def __str__(self) -> str:
        parts = []
        if self.positive:
            parts.append(f"+{self.positive:.1f}")
        if self.negative:
            parts.append(f"\u2212{self.negative:.1f}")
        return " ".join(parts)  # M41: nothing signed shows nothing


def valence(errors: Sequence[GoalError]) -> Valence:
    """Each sum reads only its own sign: adding a positive never moves the negative sum."""
    positive = sum(e.sign for e in errors if e.sign > 0)
    negative = sum(-e.sign for e in errors if e.sign < 0)
    return Valence(round(positive, 6), round(negative, 6))


def name_of(error: GoalError) -> Label:
    """SPEC M36, M37, M42, M44: the name of one negative error. Agency and exposure are read
    only from the quarantined appraiser's verdict; a deterministic error is distress until a
    probe splits it."""
    if error.channel is Channel.appraisal:
        if error.agency in (Agency.other, Agency.world):
            return Label.anger
        return Label.embarrassment if error.visible else Label.distress
    if error.controllable is True:
        return Label.regret
    if error.controllable is False:
        return Label.disappointment
    return Label.distress


def label(errors: Sequence[GoalError], charter: Charter, *, compacted: bool = False) -> Label:
    """SPEC M35–M43: the label of a record's signed outcomes."""
    if compacted:
        return Label.neutral  # M43
    negatives = [e for e in errors if e.sign < 0]
    if negatives:
        worst = min(e.sign for e in negatives)
        named = {name_of(e) for e in negatives if e.sign == worst}
        result = min(named, key=SAYS_MORE.index)
        if frustrated(negatives) and SAYS_MORE.index(Label.frustration) < SAYS_MORE.index(result):
            result = Label.frustration
        return result
    if any(
        e.sign > 0
        and e.delivery
        and e.goal is not None
        and e.goal.kind is GoalKind.charter
        and charter.line(e.goal.id) is not None
        for e in errors
    ):
        return Label.pride  # M38: a delivery against a line that exists
    return Label.neutral


def frustrated(negatives: Sequence[GoalError]) -> bool:
    """SPEC M39: repeated self-caused errors of one outcome on one (named) goal, each
    resolved by a probe (the seed's producer: probe-resolved errors)."""
    repeats = Counter(
        (e.outcome, e.goal)
        for e in negatives
        if e.agency is Agency.self and e.controllable is not None
    )
    return any(count >= 2 and goal is not None for (_, goal), count in repeats.items())
