"""An agent's webhook: where its maintainers hear of it (decisions D190-D196). One per agent
of a tenant, set by a maintainer of that agent or a PlatformAdmin; the service makes the
signing secret and shows it once, in the answer of the PUT that made it (D191)."""

from typing import Literal

from pydantic import Field
from pydantic.config import JsonDict

from contracts.answers import Answer, Timestamp, shown_as
from contracts.feedback import Contract
from contracts.scalars import Name, WebhookUrl

# What an agent's webhook hears of (D193), each a CloudEvent type of its own.
NOTICE_KINDS = ("report-addressed", "case-failing", "proposal-raised")
NoticeKind = Literal["report-addressed", "case-failing", "proposal-raised"]
CLOUDEVENT_TYPE = "factory.owners.v1.{kind}"


class SetAgentWebhook(Contract):
    """Where the agent's notices go: every PUT sets the URL and makes a new secret (D191)."""

    url: WebhookUrl = Field(
        description="https URL the notices are POSTed to (plain http only to a loopback host).",
        examples=["https://hooks.example/feedbackloop"],
    )


class SubscribeAgentWebhook(Contract):
    """``SetAgentWebhook`` with its agent, and the secret the door made for it."""

    agent: Name
    url: WebhookUrl
    secret: str = Field(min_length=32, max_length=200)


class WithdrawAgentWebhook(Contract):
    """Stop the agent's notices: nothing more is delivered, pending retries included."""

    agent: Name


SHOWN_EXAMPLE: JsonDict = {
    "agent": "support/agent",
    "url": "https://hooks.example/feedbackloop",
    "subscribedBy": "maria",
    "subscribedAt": "2026-12-05T08:00:00Z",
    "secret": None,
    "failing": False,
    "lastError": None,
    "pending": 0,
}


class AgentWebhookShown(Answer):
    """An agent's webhook. ``secret`` is shown once, in the PUT's answer, and never again."""

    model_config = shown_as(SHOWN_EXAMPLE)

    agent: str
    url: str
    subscribed_by: str = Field(alias="subscribedBy")
    subscribed_at: Timestamp = Field(alias="subscribedAt")
    secret: str | None = None
    failing: bool = False
    last_error: str | None = Field(default=None, alias="lastError")
    pending: int = 0


class AgentWebhookWithdrawn(Answer):
    model_config = shown_as({"agent": "support/agent", "withdrawn": True})

    agent: str
    withdrawn: bool


HEALTH_EXAMPLE: JsonDict = {
    "agent": "support/agent",
    "url": "https://hooks.example/feedbackloop",
    "failing": True,
    "lastError": "HTTP 503",
    "lastStatus": 503,
    "lastAttemptAt": "2026-12-05T08:00:00+00:00",
    "pending": 1,
    "givenUp": 0,
}


class AgentWebhookHealth(Answer):
    """One agent's webhook as Operations shows it (D196)."""

    model_config = shown_as(HEALTH_EXAMPLE)

    agent: str
    url: str
    failing: bool
    last_error: str | None = Field(alias="lastError")
    last_status: int | None = Field(alias="lastStatus")
    last_attempt_at: Timestamp | None = Field(alias="lastAttemptAt")
    pending: int
    given_up: int = Field(alias="givenUp")


class AgentWebhookHealthList(Answer):
    model_config = shown_as({"items": [HEALTH_EXAMPLE]})

    items: list[AgentWebhookHealth]
