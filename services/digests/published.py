"""Which digest events leave the service: one post per agent and week (SPEC W123–W134)."""

from typing import Any

from contracts import topics
from contracts.digests import (
    STANDING_ISSUE_LABELS,
    STANDING_ISSUE_TITLE,
    AgentTable,
    DigestPosted,
)
from services.digests.domain import Digest
from services.kafka.publication import Publication


def digest_posted(event: Any) -> DigestPosted:
    return DigestPosted(
        digest_id=str(event.originator_id),
        tenant_id=event.tenant_id,
        week=event.week,
        agent=event.agent,
        agent_id=event.agent_id,
        feedback_path=event.feedback_path,
        item_id=event.item_id,
        message=event.message,
        extra_context=event.extra_context,
        url=event.url,
        # The post's own table, as its text was written: the night's figure first (D53, D151).
        health=AgentTable.model_validate_json(event.extra_context).health,
        previous_items=event.previous_items,
        standing_issue_title=STANDING_ISSUE_TITLE.format(agent=event.agent),
        standing_issue_labels=list(STANDING_ISSUE_LABELS),
    )


POSTED = Publication(
    event=Digest.AgentPosted,
    topic=topics.DIGEST_POSTED,
    payload=DigestPosted,
    to_contract=digest_posted,
    key="digestId",
    title="DigestPosted",
    description="One agent's weekly digest of wrong-answer reports, posted once; identity = "
    "feedbackPath, so a redelivery is one item (SPEC W123-W126). The consumer's rules "
    "(W129-W134) are in the payload's description. v2: health's withRun and passed are the "
    "night's figure alone (decisions D53, D151).",
)

PUBLICATIONS: tuple[Publication, ...] = (POSTED,)
