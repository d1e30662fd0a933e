"""The agent→maintainers register of a tenant (SPEC C52, W13): who maintains each agent, and
the tracker repository its issues are filed in. Kept as data of the tenant (commands and
events), written by a PlatformAdmin; never a value a reporter types (decisions D25)."""

from typing import Annotated

from pydantic import Field, StringConstraints
from pydantic.config import JsonDict

from contracts.answers import Answer, Cursor, Position, shown_as
from contracts.feedback import Contract
from contracts.scalars import Name, NoNul, NotBlank

MAX_MAINTAINERS = 50
# ``owner/name`` on a tracker: letters, digits, dot, dash and underscore either side.
Repository = Annotated[
    str,
    StringConstraints(max_length=200, pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$"),
    NoNul,
    NotBlank,
]


class RegisterAgent(Contract):
    """Register an agent, or replace its maintainers and repository: what it says is what the
    register holds afterwards (the agent's name comes from the path)."""

    maintainers: list[Name] = Field(
        min_length=1,
        max_length=MAX_MAINTAINERS,
        description="The subjects (people) who maintain the agent: its AssetMaintainers.",
    )
    repository: Repository | None = Field(
        default=None, description="`owner/name` of the tracker repository of its issues."
    )


class RegisterAgentCommand(Contract):
    """``RegisterAgent`` with the agent it is about."""

    agent: Name
    registration: RegisterAgent


REGISTERED: JsonDict = {
    "agent": "support/agent",
    "maintainers": ["maria"],
    "repository": "acme/support",
}


class RegisteredAgent(Answer):
    """An agent as the register holds it."""

    model_config = shown_as(REGISTERED)

    agent: str
    maintainers: list[str]
    repository: str | None = None


class AgentRegistered(RegisteredAgent):
    """What a registration answers: the agent as the register now holds it, and where."""

    model_config = shown_as(
        {**REGISTERED, "position": "sPA7sYQEWu00Q6Luu7AWkjEJYSe9-SLMDwy3p_q_4OCYXwFf"}
    )

    position: Position


class RegisteredAgentList(Answer):
    """The tenant's register, by agent name; ``next`` continues after the page's last agent."""

    model_config = shown_as({"items": [REGISTERED], "next": None})

    items: list[RegisteredAgent]
    next: Cursor
