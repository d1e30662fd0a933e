"""Owner outcomes on a draft (SPEC M32, M33): one aggregate per draft, one active outcome.

    verdict            needs                         then
    error_exposed,     ``supersedes`` = the active    active = this outcome
    expectation_missed outcome's id, if one is
    no_issue           active (none otherwise)
    harm               the same, and a commitment
    withdrawn          ``supersedes`` = the active    nothing active: the draft's own
                       outcome's id                   contribution stands again

The same outcome id again changes nothing (a neighbour's redelivery). The decision is pure:
the time and ids come with the command.
"""

from datetime import datetime
from uuid import UUID, uuid5

from eventsourcing.domain import Aggregate, event

from contracts.errors import Conflict, Refused
from contracts.runtime_facts import OwnerOutcomeFields, OwnerVerdict
from services.store.sealing import Personal

OUTCOMES_NAMESPACE = UUID("9b1f6c2e-57a4-5d0e-b8c3-2f4a61e0d795")


def draft_outcomes_id(tenant_id: str, draft_id: str) -> UUID:
    return uuid5(OUTCOMES_NAMESPACE, f"{tenant_id}/draft/{draft_id}")


class DraftOutcomes(Aggregate):
    class Opened(Aggregate.Created):
        tenant_id: str
        draft_id: str

    class Recorded(Aggregate.Event):
        personal = Personal(names={"by": "the agent's owner"})  # their own keys, D130

        tenant_id: str
        draft_id: str
        outcome_id: str
        run_id: str
        verdict: str
        commitment: str | None
        supersedes: str | None
        by: str

    class Withdrawn(Aggregate.Event):
        personal = Personal(names={"by": "the agent's owner"})  # their own keys, D130

        tenant_id: str
        draft_id: str
        outcome_id: str
        withdrawn: str
        by: str

    def __init__(self, tenant_id: str, draft_id: str) -> None:
        self.tenant_id = tenant_id
        self.draft_id = draft_id
        self.active: str | None = None
        self.seen: set[str] = set()

    @classmethod
    def open(cls, tenant_id: str, draft_id: str, at: datetime) -> "DraftOutcomes":
        return cls._create(
            cls.Opened,
            id=draft_outcomes_id(tenant_id, draft_id),
            timestamp=at,
            tenant_id=tenant_id,
            draft_id=draft_id,
        )

    def record(self, outcome: OwnerOutcomeFields, *, by: str, at: datetime) -> None:
        """SPEC M33; refusals name the field."""
        if outcome.outcome_id in self.seen:
            return
        if outcome.verdict is OwnerVerdict.harm and outcome.commitment is None:
            raise Refused("harm needs the recorded commitment it harmed", field="commitment")
        if outcome.verdict is OwnerVerdict.withdrawn:
            if outcome.supersedes is None:
                raise Refused("a withdrawal names the outcome it withdraws", field="supersedes")
            self.must_name_active(outcome.supersedes)
            self._withdrawn(
                tenant_id=self.tenant_id, draft_id=self.draft_id,
                outcome_id=outcome.outcome_id, withdrawn=outcome.supersedes, by=by, timestamp=at,
            )  # fmt: skip
            return
        if self.active is not None:
            if outcome.supersedes is None:
                raise Conflict(
                    f"draft {self.draft_id!r} has an active outcome {self.active!r}: name it "
                    "in supersedes to replace it",
                    field="supersedes",
                    active=self.active,
                )
            self.must_name_active(outcome.supersedes)
        elif outcome.supersedes is not None:
            self.must_name_active(outcome.supersedes)
        self._recorded(
            tenant_id=self.tenant_id, draft_id=self.draft_id, outcome_id=outcome.outcome_id,
            run_id=outcome.run_id, verdict=outcome.verdict.value,
            commitment=outcome.commitment, supersedes=outcome.supersedes, by=by, timestamp=at,
        )  # fmt: skip

    def must_name_active(self, named: str) -> None:
        if named != self.active:
            raise Conflict(
                f"supersedes names {named!r}, but the draft's active outcome is {self.active!r}",
                field="supersedes",
                active=self.active,
            )

    @event(Recorded)
    def _recorded(
        self, tenant_id: str, draft_id: str, outcome_id: str, run_id: str, verdict: str,
        commitment: str | None, supersedes: str | None, by: str, timestamp: datetime,
    ) -> None:  # fmt: skip
        self.active = outcome_id
        self.seen.add(outcome_id)

    @event(Withdrawn)
    def _withdrawn(
        self, tenant_id: str, draft_id: str, outcome_id: str, withdrawn: str, by: str,
        timestamp: datetime,
    ) -> None:  # fmt: skip
        self.active = None
        self.seen.add(outcome_id)
