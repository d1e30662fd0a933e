"""Drafters: a cluster of evidence becomes a proposal's text and expected effect (C30, C44–C46).

Two profiles (``FEEDBACKLOOP_LEARNING_PROPOSAL_PROFILE``, read at each run):

- ``structured`` (the default): deterministic, built here from the evidence alone — a summary,
  the evidence table and the expected effect. The same cluster always drafts the same text.
- ``model``: an OpenAI-compatible ``/v1/chat/completions`` endpoint writes the summary's prose
  from the structured draft; the evidence table and the expected effect stay the computed
  ones, so a model never invents a number (ARCHITECTURE: never a fabricated result).

A drafter that cannot draft (connection refused, a timeout, a 5xx or any answer that is not a
completion, or no endpoint configured) raises ``DrafterUnavailable``: the generator then raises
nothing for that cluster and the evidence waits for the next run (C45).
"""

from collections import defaultdict
from dataclasses import dataclass
from statistics import fmean
from typing import Any, Protocol

import httpx

from contracts.learning import ExpectedEffect
from services.learning.clusters import Cluster
from services.learning.settings import LearningSettings

COUNT_METRIC = "evidence items"
MAX_SUMMARY_CHARS = 16_000


class DrafterUnavailable(RuntimeError):
    """The configured drafter cannot draft now; the cluster waits (C45)."""


@dataclass(frozen=True)
class Draft:
    summary: str
    expected_effect: ExpectedEffect


class Drafter(Protocol):
    profile: str

    async def draft(self, cluster: Cluster) -> Draft: ...


def expected_effect(cluster: Cluster) -> ExpectedEffect:
    """C30, computed from the evidence: the metric most items name with both a value and a
    baseline (ties by name) moves from the mean observed value back to the mean baseline;
    without one, the count of evidence items is to go to zero. Confidence grows with the
    items that agree, n / (n + 1): three agreeing items give 0.75."""
    measured: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for item in cluster.items:
        if item.metric and item.value is not None and item.baseline is not None:
            measured[item.metric].append((item.value, item.baseline))
    if measured:
        metric = min(measured, key=lambda name: (-len(measured[name]), name))
        pairs = measured[metric]
        agreeing = len(pairs)
        return ExpectedEffect(
            metric=metric,
            from_=round(fmean(v for v, _ in pairs), 4),
            to=round(fmean(b for _, b in pairs), 4),
            confidence=round(agreeing / (agreeing + 1), 2),
        )
    count = len(cluster.items)
    return ExpectedEffect(
        metric=COUNT_METRIC, from_=float(count), to=0.0, confidence=round(count / (count + 1), 2)
    )


def number(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def evidence_table(cluster: Cluster) -> str:
    rows = [
        "| evidence | origin | metric | value | baseline | observed | note |",
        "|---|---|---|---|---|---|---|",
    ]
    for item in cluster.items:
        rows.append(
            f"| {cell(item.evidence_id)} | {item.origin.value} | {cell(item.metric or '')} | "
            f"{number(item.value)} | {number(item.baseline)} | "
            f"{item.observed_at.isoformat()} | {cell(item.note)} |"
        )
    return "\n".join(rows)


def effect_line(effect: ExpectedEffect) -> str:
    return (
        f"Expected effect: {effect.metric} from {number(effect.from_)} to {number(effect.to)} "
        f"(confidence {effect.confidence:g})."
    )


def structured_summary(cluster: Cluster, effect: ExpectedEffect, prose: str | None = None) -> str:
    version = f" ({cluster.target_version})" if cluster.target_version else ""
    title = cluster.kind.value.replace("-", " ").capitalize()
    lines = [
        f"# {title} proposed for {cluster.target_asset_id}{version}",
        "",
        prose
        or (
            f"{len(cluster.items)} evidence item(s) on {cluster.target_kind} "
            f"{cluster.target_asset_id} point the same way."
        ),
        "",
        evidence_table(cluster),
        "",
        effect_line(effect),
        "",
        "This proposal changes nothing by itself (SPEC C31): accepting it asks the agent "
        "registry for a Draft release.",
    ]
    return "\n".join(lines)


class StructuredDrafter:
    """The built-in deterministic drafter (C44)."""

    profile = "structured"

    async def draft(self, cluster: Cluster) -> Draft:
        effect = expected_effect(cluster)
        return Draft(structured_summary(cluster, effect), effect)


class ModelDrafter:
    """Prose from an OpenAI-compatible endpoint, numbers from the evidence."""

    profile = "model"

    def __init__(
        self,
        url: str | None,
        model: str | None,
        api_key: str | None = None,
        timeout: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.url, self.model, self.api_key = url, model, api_key
        self.timeout, self.transport = timeout, transport

    async def draft(self, cluster: Cluster) -> Draft:
        if not self.url or not self.model:
            raise DrafterUnavailable(
                "the model profile needs FEEDBACKLOOP_LEARNING_MODEL_URL and _MODEL_NAME"
            )
        effect = expected_effect(cluster)
        prose = await self.complete(structured_summary(cluster, effect))
        return Draft(structured_summary(cluster, effect, prose=prose), effect)

    async def complete(self, structured: str) -> str:
        body = {
            "model": self.model,
            "temperature": 0,
            "messages": [
                {
                    "role": "system",
                    "content": "You summarise evidence for a maintainer of an AI agent. Write "
                    "one short paragraph saying what the evidence shows and what to improve. "
                    "Use only the facts given; do not invent numbers.",
                },
                {"role": "user", "content": structured},
            ],
        }
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        url = self.url.rstrip("/") + "/v1/chat/completions"  # type: ignore[union-attr]
        try:
            async with httpx.AsyncClient(timeout=self.timeout, transport=self.transport) as http:
                answer = await http.post(url, json=body, headers=headers)
        except httpx.HTTPError as error:  # refused, reset, timed out
            raise DrafterUnavailable(f"{url}: {type(error).__name__}: {error}") from None
        if answer.status_code != 200:
            raise DrafterUnavailable(f"{url} answered {answer.status_code}")
        return content_of(answer, url)


def content_of(answer: httpx.Response, url: str) -> str:
    try:
        data: Any = answer.json()
        text = data["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise DrafterUnavailable(f"{url} answered no completion") from None
    if not isinstance(text, str) or not text.strip():
        raise DrafterUnavailable(f"{url} answered an empty completion")
    return text.strip()[:MAX_SUMMARY_CHARS]


def drafter_for(settings: LearningSettings) -> Drafter:
    """The profile's drafter (C46), made afresh at each run from that run's settings."""
    if settings.proposal_profile == "model":
        return ModelDrafter(
            settings.model_url,
            settings.model_name,
            settings.model_api_key,
            settings.model_timeout_seconds,
        )
    return StructuredDrafter()
