"""The generator's settings, read afresh at every run: reloadable (SPEC C46, C47).

``FEEDBACKLOOP_LEARNING_MIN_EVIDENCE_ITEMS`` (default 3) and
``FEEDBACKLOOP_LEARNING_PROPOSAL_PROFILE`` (default ``structured``; ``model`` drafts through an
OpenAI-compatible ``/v1/chat/completions`` at ``FEEDBACKLOOP_LEARNING_MODEL_URL`` with
``_MODEL_NAME``, ``_MODEL_API_KEY`` and ``_MODEL_TIMEOUT_SECONDS``). The composition root hands
the generator a function that reads them at each run from the environment with the operator's
reloadable settings file over it (``FEEDBACKLOOP_RELOADABLE_SETTINGS_FILE``,
``services.processes.reloadable``, decisions D152): a change to that file takes effect at the
next run without a restart; a change to the environment needs one. A value that does not
parse falls back to its default and is named in the log, as the night's settings do: a typo
must not stop the proposals of a whole instance.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

PREFIX = "FEEDBACKLOOP_LEARNING_"
PROFILES = ("structured", "model")
Profile = Literal["structured", "model"]


@dataclass(frozen=True)
class LearningSettings:
    min_evidence_items: int = 3  # C47
    proposal_profile: Profile = "structured"  # C46
    model_url: str | None = None
    model_name: str | None = None
    model_api_key: str | None = None
    model_timeout_seconds: float = 30.0
    unparsed: tuple[str, ...] = ()

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> "LearningSettings":
        defaults, unparsed = cls(), []

        def text(name: str) -> str | None:
            value = (environ.get(PREFIX + name) or "").strip()
            return value or None

        min_items = defaults.min_evidence_items
        if (raw := text("MIN_EVIDENCE_ITEMS")) is not None:
            if raw.isdigit() and int(raw) >= 1:
                min_items = int(raw)
            else:
                unparsed.append(PREFIX + "MIN_EVIDENCE_ITEMS")
        profile: Profile = defaults.proposal_profile
        if (raw := text("PROPOSAL_PROFILE")) is not None:
            if raw.lower() == "model":
                profile = "model"
            elif raw.lower() != "structured":
                unparsed.append(PREFIX + "PROPOSAL_PROFILE")
        timeout = defaults.model_timeout_seconds
        if (raw := text("MODEL_TIMEOUT_SECONDS")) is not None:
            try:
                timeout = float(raw)
                if timeout <= 0:
                    raise ValueError(raw)
            except ValueError:
                timeout = defaults.model_timeout_seconds
                unparsed.append(PREFIX + "MODEL_TIMEOUT_SECONDS")
        return cls(
            min_evidence_items=min_items,
            proposal_profile=profile,
            model_url=text("MODEL_URL"),
            model_name=text("MODEL_NAME"),
            model_api_key=text("MODEL_API_KEY"),
            model_timeout_seconds=timeout,
            unparsed=tuple(unparsed),
        )
