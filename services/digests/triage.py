"""The triage item: one agent's weekly digest as the intake took it in (SPEC W129–W136).

Its id derives from (tenant, item id), the item id being the instance plus the
``feedbackPath`` (W129), so the previous twelve weeks' items are loaded by constructing their
ids, never searched (W130). An item is taken in once, with one outcome, each an event of its
own: ``Filed`` (an issue was filed for the agent), ``Commented`` (the carried issue got the
week's numbers) or ``Unrouted`` (nothing could be filed, and why). A second record of the same
item decides nothing (decisions D64). The module path of ``TriageItem`` is the topic of its
events in the log: it never moves.
"""

from datetime import datetime
from uuid import UUID, uuid5

from eventsourcing.domain import Aggregate

TRIAGE_NAMESPACE = UUID("4b7e0c1a-93d2-5f6e-a8b4-2c1d9e7f5a30")


def triage_id(tenant_id: str, item_id: str) -> UUID:
    """The item's aggregate: another tenant's item of the same id is another aggregate."""
    return uuid5(TRIAGE_NAMESPACE, f"{tenant_id}/{item_id}")


class TriageItem(Aggregate):
    class Filed(Aggregate.Created):
        """No earlier item carried an issue: one was filed in the agent's repository."""

        tenant_id: str
        item_id: str
        week: str
        agent: str
        agent_id: str
        repository: str
        issue_url: str

    class Commented(Aggregate.Created):
        """The carried issue (W131) got this week's numbers as a comment (W132)."""

        tenant_id: str
        item_id: str
        week: str
        agent: str
        agent_id: str
        repository: str | None
        issue_url: str
        comment_url: str

    class Unrouted(Aggregate.Created):
        """Nothing was filed: the finding says why (W134: no guess at a repository)."""

        tenant_id: str
        item_id: str
        week: str
        agent: str
        agent_id: str
        finding: str

    def __init__(
        self,
        tenant_id: str,
        item_id: str,
        week: str,
        agent: str,
        agent_id: str,
        repository: str | None = None,
        issue_url: str | None = None,
        comment_url: str | None = None,
        finding: str | None = None,
    ) -> None:
        self.tenant_id, self.item_id, self.week = tenant_id, item_id, week
        self.agent, self.agent_id = agent, agent_id
        self.repository = repository
        self.issue_url = issue_url  # W131: what the following weeks carry
        self.comment_url = comment_url
        self.finding = finding

    @classmethod
    def filed(
        cls, *, tenant_id: str, item_id: str, week: str, agent: str, agent_id: str,
        repository: str, issue_url: str, at: datetime,
    ) -> "TriageItem":  # fmt: skip
        return cls._create(
            cls.Filed, id=triage_id(tenant_id, item_id), timestamp=at, tenant_id=tenant_id,
            item_id=item_id, week=week, agent=agent, agent_id=agent_id, repository=repository,
            issue_url=issue_url,
        )  # fmt: skip

    @classmethod
    def commented(
        cls, *, tenant_id: str, item_id: str, week: str, agent: str, agent_id: str,
        repository: str | None, issue_url: str, comment_url: str, at: datetime,
    ) -> "TriageItem":  # fmt: skip
        return cls._create(
            cls.Commented, id=triage_id(tenant_id, item_id), timestamp=at, tenant_id=tenant_id,
            item_id=item_id, week=week, agent=agent, agent_id=agent_id, repository=repository,
            issue_url=issue_url, comment_url=comment_url,
        )  # fmt: skip

    @classmethod
    def unrouted(
        cls, *, tenant_id: str, item_id: str, week: str, agent: str, agent_id: str,
        finding: str, at: datetime,
    ) -> "TriageItem":  # fmt: skip
        return cls._create(
            cls.Unrouted, id=triage_id(tenant_id, item_id), timestamp=at, tenant_id=tenant_id,
            item_id=item_id, week=week, agent=agent, agent_id=agent_id, finding=finding,
        )  # fmt: skip
