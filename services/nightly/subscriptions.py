"""What the nightly context consumes from Kafka: the agent registry's word that an agent
changed, whose confirmed cases the next night re-runs first (decisions D240–D242). Read
tolerantly: a field we do not know is ignored, never a dead letter.

Posted to ``POST /factory/events`` it needs ``factory.assets.write``, the scope of the routes
that write what an agent is (its register entry, its release): one permission per fact,
whatever the door (SPEC C52).
"""

from contracts import topics
from contracts.envelope import AgentChangedMessage
from services.kafka.inbound.subscription import Subscription

AGENT_CHANGED = Subscription(
    topic=topics.AGENT_CHANGED,
    envelope=AgentChangedMessage,
    title="AgentChanged",
    description="An agent's model, instructions or release changed; its confirmed eval "
    "cases are re-run first at the next night, and the night's lines say why (D242).",
    strict=False,
    scope="factory.assets.write",
)

SUBSCRIPTIONS = (AGENT_CHANGED,)
