"""The night's settings, read tolerantly (SPEC W80–W86).

``FEEDBACKLOOP_EVALS_NIGHTLY_*`` keep the seed's keys and defaults. Unlike the rest of the
settings, a value that does not parse does not stop the process: it falls back to its default
and the night's note names it (W86), so one typo never silences the nightly runs of a whole
instance. ``FEEDBACKLOOP_MODEL_CATALOGUE`` names the file with each model's residency mark.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

PREFIX = "FEEDBACKLOOP_EVALS_NIGHTLY_"
CATALOGUE = "FEEDBACKLOOP_MODEL_CATALOGUE"
EFFORTS = ("low", "medium", "high")
TRUE, FALSE = {"true", "1", "yes", "on", "y", "t"}, {"false", "0", "no", "off", "n", "f", ""}
MAX_CONVERSATIONS = 20  # as a run asked over HTTP (RunEvalCase)

T = TypeVar("T")


class Unparsed(ValueError):
    """A value that does not parse: the default stands and the night names the setting."""


@dataclass(frozen=True)
class NightlySettings:
    enabled: bool = False  # W80: off on every instance until switched on
    max_cases: int = 15  # W81
    conversations_per_case: int = 3  # W82
    start_hour_utc: int = 1  # W83
    model: str | None = None  # W84: no default model
    effort: str = "medium"  # W85
    catalogue: Path | None = None
    unparsed: tuple[str, ...] = ()  # the names of the settings that fell back (W86)

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> "NightlySettings":
        """The settings from the environment; never raises (W86)."""
        unparsed: list[str] = []
        defaults = cls()

        def read(name: str, parse: Callable[[str], T], default: T) -> T:
            raw = environ.get(PREFIX + name)
            if raw is None:
                return default
            try:
                return parse(raw.strip())
            except Unparsed:
                unparsed.append(PREFIX + name)
                return default

        catalogue = (environ.get(CATALOGUE) or "").strip()
        return cls(
            enabled=read("ENABLED", _flag, defaults.enabled),
            max_cases=read("MAX_CASES", _whole(0, None), defaults.max_cases),
            conversations_per_case=read(
                "CONVERSATIONS_PER_CASE",
                _whole(1, MAX_CONVERSATIONS),
                defaults.conversations_per_case,
            ),
            start_hour_utc=read("START_HOUR_UTC", _whole(0, 23), defaults.start_hour_utc),
            model=read("MODEL", lambda raw: raw or None, defaults.model),
            effort=read("EFFORT", _effort, defaults.effort),
            catalogue=Path(catalogue) if catalogue else None,
            unparsed=tuple(unparsed),
        )

    def inputs(self) -> dict[str, Any]:
        """What a night records of the settings it ran with (W87)."""
        return {
            "enabled": self.enabled,
            "maxCases": self.max_cases,
            "conversationsPerCase": self.conversations_per_case,
            "startHourUtc": self.start_hour_utc,
            "model": self.model,
            "effort": self.effort,
            "catalogue": str(self.catalogue) if self.catalogue else None,
            "unparsed": list(self.unparsed),
        }


def _flag(raw: str) -> bool:
    lowered = raw.lower()
    if lowered in TRUE:
        return True
    if lowered in FALSE:
        return False
    raise Unparsed(raw)


def _whole(low: int, high: int | None) -> Callable[[str], int]:
    def parse(raw: str) -> int:
        try:
            value = int(raw)
        except ValueError:
            raise Unparsed(raw) from None
        if value < low or (high is not None and value > high):
            raise Unparsed(raw)
        return value

    return parse


def _effort(raw: str) -> str:
    lowered = raw.lower()
    if lowered not in EFFORTS:
        raise Unparsed(raw)
    return lowered
