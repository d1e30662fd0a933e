"""Who ran an eval run, and which runs may be compared (SPEC W58; decisions D52).

Two runs of a case are comparable only when ``ranBy`` agrees (W58), and a night's run is not a
person's run on demand even when the night ran as that person (it runs as the case's
confirmer, W101): so a run's *runner* is the pair (``runner``, ``ranBy``), ``runner`` being
``night`` for a run a night made and ``manual`` for one a person asked for. Every figure the
API shows about runs (the last run, the pass-rate history, the digest's health line) is of one
runner and says which.
"""

from dataclasses import dataclass
from typing import Literal

Runner = Literal["night", "manual"]


def runner_of(night: str | None) -> Runner:
    """A run recorded for a night (its date) is the night's; any other a person's."""
    return "manual" if night is None else "night"


@dataclass(frozen=True, order=True)
class RunnerKey:
    """The runs that compare with each other: one runner kind, one ``ranBy`` (W58)."""

    runner: Runner
    ran_by: str

    @property
    def text(self) -> str:
        """The key as one string (a JSON object's key in a read model)."""
        return f"{self.runner}/{self.ran_by}"
