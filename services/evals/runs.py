"""Running a case: N real conversations with the agent, one after the other, each scored.

SPEC W52–W71. Who asks is apart from how it runs: ``run`` is the HTTP route's, where
every round runs as the person who pressed Run (``ranBy``) and a service identity is refused
(W57); the nightly runner uses the same parts (``load``, ``agent_for``, ``request``,
``converse``, ``recorded``) with the case's confirmer as the one it runs as (W101). Without a
configured agent, or without a model where the agent needs one, the run starts nothing and says
so (W69). A model-configuration error, a reply on another model than the pinned one (W70, W71)
or an agent that did not answer is a non-answer: never an invention, and out of every rate.
Scores come from deterministic checks only (W55).
"""

import asyncio
import logging
import uuid
from collections.abc import Callable, Mapping
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from contracts.agent import AgentReply, AgentRequest, Effort
from contracts.errors import NotConfigured, Refused
from contracts.evals import RecordEvalRun, RunEvalCase
from services.bus.command_bus import CommandBus
from services.bus.decisions import Outcome
from services.bus.issued import Issued
from services.edge.auth import Principal
from services.evals.agents import AgentClient, AgentUnavailable, ModelConfigurationError
from services.evals.domain import EvalCase
from services.evals.handlers import load_case
from services.evals.progress import UNDER_WAY, RunsUnderWay, UnderWay
from services.evals.scoring import ThreadScore, Thresholds, score_reply, summarize
from services.permissions.agent_register import require_maintainer
from services.permissions.rules import MAINTAINER, require
from services.store.event_store import EventStore

log = logging.getLogger(__name__)

MAX_KEPT_TEXT = 4_000


class CaseRunner:
    def __init__(
        self,
        store: EventStore,
        bus: CommandBus,
        client: AgentClient | None,
        *,
        default_model: str | None,
        thresholds: Mapping[str, Thresholds],
        reply_timeout: float = 120.0,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        under_way: RunsUnderWay = UNDER_WAY,
    ) -> None:
        self.store, self.bus, self.client = store, bus, client
        self.under_way = under_way
        self.default_model = default_model
        self.thresholds = thresholds
        self.reply_timeout = reply_timeout
        self.clock = clock

    async def run(
        self, principal: Principal, case_id: UUID, order: RunEvalCase
    ) -> tuple[RecordEvalRun, Outcome]:
        """Who asks: the person who pressed Run (W56, W57). Runs as them and records."""
        if principal.service:
            raise Refused(
                "a run runs as the person who pressed Run, never as a service identity",
                field="ranBy",
            )
        # The role rules before the agent is asked anything: a refused run costs no
        # conversation (decisions D23); the bus asks them again of the record.
        require(principal.roles, MAINTAINER, "RecordEvalRun")
        case = await self.load(principal.tenant_id, case_id)
        await asyncio.to_thread(
            require_maintainer, self.store, principal.tenant_id, principal.subject,
            principal.roles, case.agent or "", "a run of this case",
        )  # fmt: skip
        client, model = self.agent_for(case)
        run_id = uuid.uuid4()
        tenant = principal.tenant_id
        self.under_way.started(
            tenant,
            UnderWay(run_id, case.id, principal.subject, order.conversations, 0, self.clock()),
        )
        try:
            threads = []
            for index in range(1, order.conversations + 1):
                request = self.request(
                    case, model=model, effort=order.effort, run_id=run_id, index=index,
                    submitter=principal.subject,
                )  # fmt: skip
                threads.append(await self.converse(client, case, request, run_id, index))
                self.under_way.advanced(tenant, run_id, index)
            record = self.recorded(
                case, run_id=run_id, model=model, effort=order.effort, threads=threads
            )
            outcome = await self.bus.execute(
                Issued(record, tenant, principal.subject, f"run/{run_id}", self.clock(),
                       roles=principal.roles)
            )  # fmt: skip
        finally:
            self.under_way.ended(tenant, run_id)
        return record, outcome

    # How a run runs, whoever asked: the HTTP route on behalf of the person who pressed Run,
    # the nightly runner on behalf of the case's confirmer (SPEC W101).

    async def load(self, tenant_id: str, case_id: UUID) -> EvalCase:
        case = await asyncio.to_thread(load_case, self.store, tenant_id, case_id)
        if not case.agent:
            raise Refused("the case has not been lifted yet", field="caseId")
        return case

    def agent_for(self, case: EvalCase, model: str | None = None) -> tuple[AgentClient, str | None]:
        """The agent and the model a run of the case talks to; W69 when there is none."""
        client = self.client
        if client is None:
            raise NotConfigured("no agent is configured (FEEDBACKLOOP_AGENT_URL): nothing ran")
        model = model or case.model or self.default_model
        if client.needs_model and not model:
            raise NotConfigured(
                "no model: the case pins none and FEEDBACKLOOP_AGENT_MODEL is unset; nothing ran"
            )
        return client, model

    @staticmethod
    def request(
        case: EvalCase,
        *,
        model: str | None,
        effort: Effort,
        run_id: UUID,
        index: int,
        submitter: str,
    ) -> AgentRequest:
        """One conversation's request; ``submitter`` is the person it runs as (W56, W101)."""
        return AgentRequest(
            prompt=case.prompt,
            context=case.context,
            requested_model=model,
            effort=effort,
            thread_ref=f"{case.ref}/_Thread/{run_id}/{index}",
            submitter=submitter,
        )

    def recorded(
        self,
        case: EvalCase,
        *,
        run_id: UUID,
        model: str | None,
        effort: Effort,
        threads: list[dict[str, Any]],
        night: str | None = None,
    ) -> RecordEvalRun:
        """The run to record: every thread's score and the summary by the pass rule."""
        scores = [ThreadScore(**thread["score"]) for thread in threads]
        summary = summarize(scores, self.thresholds.get(case.agent, Thresholds()))
        return RecordEvalRun(
            case_id=case.id,
            run_id=run_id,
            model=model,
            effort=effort,
            threads=threads,
            summary=asdict(summary),
            night=night,
        )

    async def converse(
        self,
        client: AgentClient,
        case: EvalCase,
        request: AgentRequest,
        run_id: UUID,
        index: int,
        *,
        expected_model: str | None = None,
    ) -> dict[str, Any]:
        """One conversation, scored. A reply on another model than ``expected_model`` (by
        default the case's pin, W71) is a non-answer; the night expects the model it checked
        for EU residency, since no other model may stand in for it (W98)."""
        reply: AgentReply | None = None
        reason: str | None = None
        try:
            reply = await asyncio.wait_for(client.reply(request), self.reply_timeout)
        except ModelConfigurationError as error:
            reason = f"model-configuration: {error}"
        except (AgentUnavailable, TimeoutError) as error:
            reason = f"no-reply: {error or 'timed out'}"
        expected = expected_model or case.model
        if reply is not None and expected and reply.model_name != expected:
            reason = f"answered-on-another-model: {reply.model_name}"
        score = score_reply(
            reply.text if reply else "",
            reply.tool_calls if reply else [],
            must_ground=case.must_ground,
            must_not_assert=case.must_not_assert,
            must_assert=case.must_assert,
            non_answer_reason=reason,
        )
        return {
            "index": index,
            "threadRef": request.thread_ref,
            "link": f"/factory/evals/cases/{case.id}/runs/{run_id}/threads/{index}",
            "score": asdict(score),
            "modelName": reply.model_name if reply else None,
            "text": (reply.text if reply else "")[:MAX_KEPT_TEXT],
            "toolCalls": [c.model_dump(by_alias=True) for c in reply.tool_calls] if reply else [],
            # The reply's place in the agent's traces, if it named one (D263).
            "traceId": reply.trace_id if reply else None,
            "spanId": reply.span_id if reply else None,
            "genAi": reply.gen_ai.as_attributes() or None if reply and reply.gen_ai else None,
            "at": self.clock().isoformat(),
        }
