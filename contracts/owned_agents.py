"""What waits for an agent's maintainers (decisions D250–D256): ``GET /factory/owners/agents``
answers, for each agent the register names the caller a maintainer of, the reports addressed
to it still open, its cases failing in the tenant's last night, the proposals waiting for one
of its maintainers and whether its webhook is failing. The console's My agents page shows the
same answer."""

from typing import Literal

from pydantic import Field
from pydantic.config import JsonDict

from contracts.answers import Answer, Cursor, Timestamp, shown_as

# D253: what a proposal waits for from the agent's maintainer.
WaitingFor = Literal["pick-up", "decision", "release"]

EXAMPLE: JsonDict = {
    "agent": "support/agent",
    "maintainers": ["maria"],
    "repository": "acme/support-agent",
    "reports": {
        "open": 1,
        "items": [
            {
                "reportId": "6f1c2a4e-8d0b-4d7e-9a55-2f4b1c3d5e6f",
                "kind": "not-found",
                "status": "New",
                "model": "eu-1",
                "message": "It said it could not find the rate, which is on the profile page.",
                "submittedAt": "2026-12-05T08:00:00+00:00",
            }
        ],
    },
    "night": {
        "date": "2026-12-05",
        "status": "Warning",
        "failing": 1,
        "items": [
            {
                "caseId": "0b6f2d1e-3c4a-4f5b-8e6d-7a8b9c0d1e2f",
                "ref": "Feedback/_Evals/support/agent/rate",
                "outcome": "ran",
                "reason": None,
                "passed": False,
                "scored": 3,
            }
        ],
    },
    "proposals": {
        "waiting": 1,
        "items": [
            {
                "proposalId": "5e4d3c2b-1a09-4f8e-9d7c-6b5a4f3e2d1c",
                "kind": "prompt-improvement",
                "state": "Proposed",
                "waitingFor": "pick-up",
                "raisedAt": "2026-12-05T06:00:00+00:00",
            }
        ],
    },
    "webhook": {"url": "https://hooks.example/feedbackloop", "failing": True,
                "lastError": "HTTP 503", "pending": 2, "givenUp": 0},
}  # fmt: skip


class OpenReport(Answer):
    """A report addressed to the agent's owner (its Kind in force is one of theirs) that no
    reviewer closed yet (D251)."""

    report_id: str = Field(alias="reportId", json_schema_extra={"format": "uuid"})
    kind: str
    status: Literal["New", "Triaged"]
    model: str | None
    message: str = Field(description="The report's first 200 characters, as the Inbox shows it.")
    submitted_at: Timestamp | None = Field(alias="submittedAt")


class OpenReports(Answer):
    open: int = Field(description="How many are open in all; `items` holds the newest.")
    items: list[OpenReport]


class FailingCase(Answer):
    """A line of the night of one of the agent's cases that failed, or ran and did not pass
    every conversation it scored: the rule of the webhook's `case-failing` (D193, D252)."""

    case_id: str = Field(alias="caseId", json_schema_extra={"format": "uuid"})
    ref: str
    outcome: Literal["ran", "failed"]
    reason: str | None
    passed: bool | None = Field(description="The run's verdict; null when it did not run.")
    scored: int | None = Field(description="Conversations scored; null when it did not run.")


class LastNight(Answer):
    date: str = Field(json_schema_extra={"format": "date"})
    status: str
    failing: int = Field(description="How many of the agent's cases failed; `items`: the first.")
    items: list[FailingCase]


class WaitingProposal(Answer):
    proposal_id: str = Field(alias="proposalId", json_schema_extra={"format": "uuid"})
    kind: str
    state: str
    waiting_for: WaitingFor = Field(alias="waitingFor")
    raised_at: Timestamp = Field(alias="raisedAt")


class WaitingProposals(Answer):
    waiting: int = Field(description="How many wait in all; `items` holds the oldest.")
    items: list[WaitingProposal]


class WebhookState(Answer):
    """The agent's webhook as its own GET shows its health (D196); null when none is set."""

    url: str
    failing: bool
    last_error: str | None = Field(alias="lastError")
    pending: int
    given_up: int = Field(alias="givenUp")


class OwnedAgent(Answer):
    model_config = shown_as(EXAMPLE)

    agent: str
    maintainers: list[str]
    repository: str | None
    reports: OpenReports
    night: LastNight | None = Field(
        description="The tenant's last night, with this agent's failing lines; null before "
        "the first night."
    )
    proposals: WaitingProposals
    webhook: WebhookState | None


class OwnedAgentList(Answer):
    model_config = shown_as({"items": [EXAMPLE], "next": None})

    items: list[OwnedAgent]
    next: Cursor
