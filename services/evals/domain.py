"""The EvalCase aggregate: created carrying only its source, lifted, confirmed, run.

SPEC W42–W77. A case is created with only its source (the report), and its own lift fills
the rest from that report (W44–W46), so every way of creating a case gets the same lift.
``confirmed_by`` is written only here, from the authenticated caller (W72–W75). A run's
result is recorded with every thread's score; earlier runs stay in the history.
"""

from dataclasses import asdict
from datetime import datetime
from typing import Any
from uuid import UUID, uuid5

from eventsourcing.domain import Aggregate, event

from contracts.errors import NotPermitted, Refused
from services.evals.lift import Definition
from services.store.sealing import Personal

CASE_NAMESPACE = UUID("5a1d7c3e-8f42-5e19-b6a0-3c2d1e0f9b87")


def case_id_for(tenant_id: str, report_id: UUID) -> UUID:
    """One case per report: lifting twice names the same case (W44)."""
    return uuid5(CASE_NAMESPACE, f"{tenant_id}/{report_id}")


def agent_id(agent_path: str) -> str:
    """SPEC W43: the agent path with every ``/`` replaced by ``_``."""
    return agent_path.replace("/", "_")


def case_ref(agent_path: str, case_id: UUID) -> str:
    """Where the case sits: under the agent's evals, never under the agent node (W42, W47)."""
    return f"_Evals/{agent_id(agent_path)}/{case_id}"


class EvalCase(Aggregate):
    class Created(Aggregate.Created):
        tenant_id: str
        source: str
        ref: str

    class Lifted(Aggregate.Event):
        # The reporter's words, lifted from the report: sealed under that report's key; the
        # evidence node copied into ``must_ground`` is theirs too (it may begin with their
        # id, D130).
        personal = Personal(
            text=("prompt", "context", "must_ground", "must_not_assert", "must_assert"),
            of="source",
            binds=True,
        )

        tenant_id: str
        source: str
        ref: str
        agent: str
        prompt: str
        context: list[str]
        must_ground: list[str]
        must_not_assert: list[str]
        must_assert: str | None
        model: str | None

    class Patched(Aggregate.Event):
        personal = Personal(text=("changes",))  # sealed as the case's lift is

        changes: dict[str, Any]

    class Confirmed(Aggregate.Event):
        personal = Personal(names={"confirmed_by": "AgentMaintainer"})  # their own key, D130

        tenant_id: str
        confirmed_by: str

    class Unconfirmed(Aggregate.Event):
        tenant_id: str

    class RunRecorded(Aggregate.Event):
        # The agent's answers to the reporter's prompt, and its tool calls' arguments, under
        # the case's key (the report's); whoever ran it under their own (D130).
        personal = Personal(
            text=("threads[].text", "threads[].toolCalls"), names={"ran_by": "whoever ran it"}
        )

        tenant_id: str
        agent: str
        run_id: str
        ran_by: str
        model: str | None
        effort: str
        threads: list[dict[str, Any]]
        summary: dict[str, Any]
        night: str | None = None  # W102: the night that ran it; runs before nights have none

    def __init__(self, tenant_id: str, source: str, ref: str) -> None:
        self.tenant_id = tenant_id
        self.source = source  # W44: the only field written at create
        self.ref = ref
        self.agent = ""
        self.prompt = ""
        self.context: list[str] = []
        self.must_ground: list[str] = []
        self.must_not_assert: list[str] = []
        self.must_assert: str | None = None
        self.model: str | None = None
        self.confirmed_by: str | None = None
        self.run_ids: list[str] = []

    @classmethod
    def create(
        cls, *, case_id: UUID, tenant_id: str, source: UUID, agent_path: str, at: datetime
    ) -> "EvalCase":
        return cls._create(
            cls.Created,
            id=case_id,
            timestamp=at,
            tenant_id=tenant_id,
            source=str(source),
            ref=case_ref(agent_path, case_id),
        )

    def lift(self, definition: Definition, *, at: datetime) -> None:
        """Fill the case from its report's lift; the event also names the case for readers."""
        self._lifted(
            tenant_id=self.tenant_id,
            source=self.source,
            ref=self.ref,
            **asdict(definition),
            timestamp=at,
        )

    @event(Lifted)
    def _lifted(
        self,
        tenant_id: str,
        source: str,
        ref: str,
        agent: str,
        prompt: str,
        context: list[str],
        must_ground: list[str],
        must_not_assert: list[str],
        must_assert: str | None,
        model: str | None,
        timestamp: datetime,
    ) -> None:
        self.agent, self.prompt, self.context = agent, prompt, context
        self.must_ground, self.must_not_assert = must_ground, must_not_assert
        self.must_assert, self.model = must_assert, model

    def patch(self, changes: dict[str, Any], *, at: datetime) -> None:
        if changes:
            self._patched(changes=changes, timestamp=at)

    @event(Patched)
    def _patched(self, changes: dict[str, Any], timestamp: datetime) -> None:
        for name, value in changes.items():
            setattr(self, name, value)

    def confirm(self, confirmed: bool, *, by: str, by_service: bool, at: datetime) -> None:
        """Confirming stamps the caller (W74); unconfirming clears it (W75).

        Only a person confirms (W74: "when a person saves the case confirmed"; W76: the
        night runs as the stamped person): a service would make the runner act as nobody.
        A service may still unconfirm: that only takes a case out of the nightly runs."""
        if confirmed and by_service:
            raise NotPermitted(
                "only a person may confirm an eval case (SPEC W74, W76): this key is a "
                "service's, and the nightly runs act as the person who confirmed",
                field="confirmedBy",
            )
        if confirmed and self.confirmed_by != by:
            self._confirmed(tenant_id=self.tenant_id, confirmed_by=by, timestamp=at)
        elif not confirmed and self.confirmed_by is not None:
            self._unconfirmed(tenant_id=self.tenant_id, timestamp=at)

    @event(Confirmed)
    def _confirmed(self, tenant_id: str, confirmed_by: str, timestamp: datetime) -> None:
        self.confirmed_by = confirmed_by

    @event(Unconfirmed)
    def _unconfirmed(self, tenant_id: str, timestamp: datetime) -> None:
        self.confirmed_by = None

    def record_run(
        self,
        *,
        run_id: UUID,
        ran_by: str,
        model: str | None,
        effort: str,
        threads: list[dict[str, Any]],
        summary: dict[str, Any],
        at: datetime,
        night: str | None = None,
    ) -> None:
        if not self.agent:
            raise Refused("the case has not been lifted yet", field="caseId")
        if str(run_id) in self.run_ids:
            return  # a retry after a lost acknowledgement: recorded already
        self._run_recorded(
            tenant_id=self.tenant_id,
            agent=self.agent,
            run_id=str(run_id),
            ran_by=ran_by,
            model=model,
            effort=effort,
            threads=threads,
            summary=summary,
            night=night,
            timestamp=at,
        )

    @event(RunRecorded)
    def _run_recorded(
        self,
        tenant_id: str,
        agent: str,
        run_id: str,
        ran_by: str,
        model: str | None,
        effort: str,
        threads: list[dict[str, Any]],
        summary: dict[str, Any],
        timestamp: datetime,
        night: str | None = None,
    ) -> None:
        self.run_ids.append(run_id)
