"""A change of an agent, as the agent registry announces it (seed 000: a report's case is
"replayed whenever the instructions or the model change"; decisions D240, D241).

``factory.registry.v1.agent-changed``, CloudEvent type ``factory.registry.v1.AgentChanged``:
the registry (or the agents' runtime) says that an agent now answers on another model, under
other instructions, or as another release. Read tolerantly, as every neighbour's event is
(``contracts.neighbours``); every field we read is bounded by the scalars every door reads
with. The tenant is the CloudEvent's ``tenantid``, never a field of ``data``.
"""

from enum import StrEnum

from pydantic import Field

from contracts.neighbours import Neighbour
from contracts.scalars import Instant, Name


class AgentAspect(StrEnum):
    """What of the agent changed (D240): a closed list, so the night can say it."""

    model = "model"
    instructions = "instructions"
    release = "release"


class AgentChanged(Neighbour):
    """An agent changed: its confirmed eval cases are re-run first at the next night (D242)."""

    agent: Name = Field(description="The agent's path, as eval cases and the register name it.")
    what: AgentAspect
    before: Name | None = Field(
        default=None,
        alias="from",
        description="What it was (a model's name, an instructions version, a release id); "
        "left out when the registry does not know.",
    )
    after: Name = Field(alias="to", description="What it is now.")
    at: Instant = Field(description="When the change took effect.")
