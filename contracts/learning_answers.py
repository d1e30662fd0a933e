"""What the HTTP API answers about learning proposals (SPEC C26, C36): a proposal with its
evidence and expected effect, a page of them, and a pick-up, decision or release written."""

from typing import Literal

from pydantic import Field
from pydantic.config import JsonDict, JsonValue

from contracts.answers import Answer, Cursor, Position, Timestamp, shown_as
from contracts.learning import ProposalKind

# API answers: on the ``Answer`` base, each with its example (``services/edge/openapi.py`` shows
# it).

PROPOSAL_ID = "45961f88-d549-5194-b46e-3580d27a520d"  # acme's Office_Agent_Coach, three items
_EVIDENCE_IDS = [f"evaluation:eval-{n}" for n in (311, 318, 324)]
_EVIDENCE: list[JsonValue] = [
    {
        "evidenceId": evidence_id,
        "origin": "failed-evaluation",
        "metric": "groundedness",
        "value": value,
        "baseline": 0.8,
        "note": "gate grounded failed",
        "serves": ["charter:grounded-answers"],
        "observedAt": at,
    }
    for evidence_id, value, at in zip(
        _EVIDENCE_IDS,
        (0.55, 0.6, 0.5),
        ("2026-11-27T22:10:00+00:00", "2026-11-28T22:10:00+00:00", "2026-11-29T22:10:00+00:00"),
        strict=True,
    )
]
PROPOSAL_VIEW_EXAMPLE: JsonDict = {
    "proposalId": PROPOSAL_ID,
    "tenantId": "acme",
    "kind": "prompt-improvement",
    "targetAssetId": "Office_Agent_Coach",
    "targetVersion": "1.4.0",
    "summaryRef": "artifact:sha256:"
    "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881",
    "evidenceRefs": list[JsonValue](_EVIDENCE_IDS),
    "evidence": _EVIDENCE,
    "evidenceHash": "31872a9bff5ce886c53b76519b75d1f72311ac430508e3dbd178edc896246295",
    "expectedEffect": {"metric": "groundedness", "from": 0.55, "to": 0.8, "confidence": 0.75},
    "state": "Accepted",
    "raisedAt": "2026-11-30T06:00:02.518204+00:00",
    "reviewedBy": "bruno",
    "decidedAt": "2026-11-30T09:41:37.004512+00:00",
    "reason": None,
    "supersededBy": None,
    "resultingReleaseId": None,
    "waitingForRelease": True,
    "profile": "structured",
    "charterLine": "grounded-answers",
}
PROPOSAL_WRITTEN_EXAMPLE: JsonDict = {
    "proposalId": PROPOSAL_ID,
    "state": "Accepted",
    "reviewedBy": "bruno",
    "resultingReleaseId": None,
    "position": "Ffz74Sl0Xi08O0_C-g0PbX9Ov1Z3UGT6U0XNfLkbw2XZzT1a",
}
StateShown = Literal["Proposed", "InReview", "Accepted", "Rejected", "Superseded"]


class EvidenceRow(Answer):
    evidence_id: str = Field(alias="evidenceId")
    origin: str
    metric: str | None
    value: float | None
    baseline: float | None
    note: str
    serves: list[str] = Field(default_factory=list)
    observed_at: Timestamp = Field(alias="observedAt")


class EffectShown(Answer):
    """SPEC C30."""

    metric: str
    from_: float | None = Field(alias="from")
    to: float | None
    confidence: float


class ProposalView(Answer):
    """SPEC C26 and C36: a proposal with its evidence and expected effect."""

    model_config = shown_as(PROPOSAL_VIEW_EXAMPLE)

    proposal_id: str = Field(alias="proposalId", json_schema_extra={"format": "uuid"})
    tenant_id: str = Field(alias="tenantId")
    kind: str = Field(description="SPEC C27: " + ", ".join(kind.value for kind in ProposalKind))
    target_asset_id: str = Field(alias="targetAssetId")
    target_version: str | None = Field(alias="targetVersion")
    summary_ref: str = Field(alias="summaryRef", description="The drafted summary (C06).")
    evidence_refs: list[str] = Field(alias="evidenceRefs")
    evidence: list[EvidenceRow]
    evidence_hash: str = Field(alias="evidenceHash")
    expected_effect: EffectShown | None = Field(alias="expectedEffect")
    state: StateShown
    raised_at: Timestamp = Field(alias="raisedAt")
    reviewed_by: str | None = Field(alias="reviewedBy")
    decided_at: Timestamp | None = Field(alias="decidedAt")
    reason: str | None
    superseded_by: str | None = Field(alias="supersededBy")
    resulting_release_id: str | None = Field(alias="resultingReleaseId")
    waiting_for_release: bool = Field(
        alias="waitingForRelease",
        description="Accepted, and the registry has not answered with the release id yet (C53).",
    )
    profile: str = Field(description="The drafter's profile (C46).")
    charter_line: str | None = Field(
        default=None,
        alias="charterLine",
        description="The highest-ranked line of the tenant's charter that the evidence serves "
        "(M19: a line the charter has); among proposals with as much evidence, a higher line "
        "comes first (M21).",
    )


class ProposalList(Answer):
    model_config = shown_as({"items": [PROPOSAL_VIEW_EXAMPLE], "next": None})

    items: list[ProposalView]
    next: Cursor


class ProposalWritten(Answer):
    model_config = shown_as(PROPOSAL_WRITTEN_EXAMPLE)

    proposal_id: str = Field(alias="proposalId", json_schema_extra={"format": "uuid"})
    state: StateShown
    reviewed_by: str | None = Field(alias="reviewedBy")
    resulting_release_id: str | None = Field(alias="resultingReleaseId")
    position: Position
