"""What an agent's maintainers hear of, as notices (decisions D193): a pure reading of one
event of the log, no clock, no I/O, so a replay gives the same notices under the same ids.

- ``report-addressed``: a report addressed to the agent's owner (``Report.AgentOwnerNotified``,
  SPEC W35);
- ``case-failing``: a night's line of one of the agent's cases that failed, or ran and did
  not pass (SPEC W90, W103; decisions D252);
- ``proposal-raised``: a learning proposal raised for the agent (``LearningProposal.Raised``,
  whose target is the agent's path, SPEC C32).

A notice carries ids, kinds and counts only, never a person's words (the report's Addressee,
an answer's text): the body is kept until delivered and needs no sealing (D194). Its id is the
CloudEvent id of the event it was read from, the delivery's id a receiver de-duplicates on.
"""

from dataclasses import dataclass
from typing import Any

from contracts.agent_webhooks import CLOUDEVENT_TYPE, NoticeKind
from services.kafka.publication import cloudevent_id


@dataclass(frozen=True)
class Notice:
    id: str
    tenant_id: str
    agent: str
    kind: NoticeKind
    at: str  # the event's time, ISO 8601
    data: dict[str, Any]

    def cloudevent(self, source: str) -> dict[str, Any]:
        return {
            "specversion": "1.0",
            "id": self.id,
            "source": source,
            "type": CLOUDEVENT_TYPE.format(kind=self.kind),
            "subject": self.agent,
            "time": self.at,
            "datacontenttype": "application/json",
            "data": self.data,
        }


def report_addressed(event: Any) -> Notice:
    return Notice(
        cloudevent_id(event.originator_id, event.originator_version), event.tenant_id,
        event.agent, "report-addressed", event.timestamp.isoformat(),
        {"agent": event.agent, "reportId": str(event.originator_id), "kind": event.kind},
    )  # fmt: skip


def proposal_raised(event: Any) -> Notice:
    return Notice(
        cloudevent_id(event.originator_id, event.originator_version), event.tenant_id,
        event.target_asset_id, "proposal-raised", event.timestamp.isoformat(),
        {"agent": event.target_asset_id, "proposalId": str(event.originator_id),
         "kind": event.kind},
    )  # fmt: skip


def failing(line: dict[str, Any]) -> bool:
    """A night's line is failing when the case failed to run, or ran and its run did not
    pass (skipped and over-cap lines say nothing of the agent). A line's ``score.passed`` is
    the run's verdict (SPEC §3.7), not a count of conversations (decisions D252)."""
    if line.get("outcome") == "failed":
        return True
    score = line.get("score") or {}
    return line.get("outcome") == "ran" and score.get("passed") is False


def case_failing(event: Any, agent: str) -> Notice:
    line = event.line
    score = line.get("score") or {}
    data: dict[str, Any] = {
        "agent": agent,
        "caseId": line["case"],
        "nightId": str(event.originator_id),
        "outcome": line["outcome"],
    }
    if score:
        data["passed"], data["scored"] = score.get("passed"), score.get("scored")
    return Notice(
        cloudevent_id(event.originator_id, event.originator_version), event.tenant_id, agent,
        "case-failing", event.timestamp.isoformat(), data,
    )  # fmt: skip
