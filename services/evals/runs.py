"""Running a case: N real conversations with the agent, one after the other, each scored.

SPEC W52–W71. Every round runs as the person who pressed Run (``ranBy``); a service identity is
refused (W57). Without a configured agent, or without a model where the agent needs one, the run
starts nothing and says so (W69). A model-configuration error, a reply on another model than the
pinned one (W70, W71) or an agent that did not answer is a non-answer: never an invention, and
out of every rate. Scores come from deterministic checks only (W55).
"""

import asyncio
import logging
import uuid
from collections.abc import Callable, Mapping
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from contracts.agent import AgentReply, AgentRequest
from contracts.evals import RecordEvalRun, RunEvalCase
from services.auth import Principal
from services.bus import CommandBus, Issued, Outcome
from services.errors import NotConfigured, Refused
from services.evals.agents import AgentClient, AgentUnavailable, ModelConfigurationError
from services.evals.domain import EvalCase
from services.evals.handlers import load_case
from services.evals.scoring import Thresholds, score_reply, summarize
from services.store import EventStore

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
    ) -> None:
        self.store, self.bus, self.client = store, bus, client
        self.default_model = default_model
        self.thresholds = thresholds
        self.reply_timeout = reply_timeout
        self.clock = clock

    async def run(
        self, principal: Principal, case_id: UUID, order: RunEvalCase
    ) -> tuple[RecordEvalRun, Outcome]:
        """Run and record; answers what was recorded and the position it was written at."""
        if principal.service:
            raise Refused(
                "a run runs as the person who pressed Run, never as a service identity",
                field="ranBy",
            )
        case = await asyncio.to_thread(load_case, self.store, principal.tenant_id, case_id)
        if not case.agent:
            raise Refused("the case has not been lifted yet", field="caseId")
        client = self.client
        if client is None:
            raise NotConfigured("no agent is configured (FEEDBACKLOOP_AGENT_URL): nothing ran")
        model = case.model or self.default_model
        if client.needs_model and not model:
            raise NotConfigured(
                "no model: the case pins none and FEEDBACKLOOP_AGENT_MODEL is unset; nothing ran"
            )
        run_id = uuid.uuid4()
        threads = []
        for index in range(1, order.conversations + 1):
            request = AgentRequest(
                prompt=case.prompt,
                context=case.context,
                requested_model=model,
                effort=order.effort,
                thread_ref=f"{case.ref}/_Thread/{run_id}/{index}",
                submitter=principal.subject,
            )
            threads.append(await self.converse(client, case, request, run_id, index))
        scores = [t.pop("_score") for t in threads]
        summary = summarize(scores, self.thresholds.get(case.agent, Thresholds()))
        record = RecordEvalRun(
            case_id=case.id,
            run_id=run_id,
            model=model,
            effort=order.effort,
            threads=threads,
            summary=asdict(summary),
        )
        outcome = await self.bus.execute(
            Issued(record, principal.tenant_id, principal.subject, f"run/{run_id}", self.clock())
        )
        return record, outcome

    async def converse(
        self,
        client: AgentClient,
        case: EvalCase,
        request: AgentRequest,
        run_id: UUID,
        index: int,
    ) -> dict[str, Any]:
        reply: AgentReply | None = None
        reason: str | None = None
        try:
            reply = await asyncio.wait_for(client.reply(request), self.reply_timeout)
        except ModelConfigurationError as error:
            reason = f"model-configuration: {error}"
        except (AgentUnavailable, TimeoutError) as error:
            reason = f"no-reply: {error or 'timed out'}"
        if reply is not None and case.model and reply.model_name != case.model:
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
            "_score": score,
            "index": index,
            "threadRef": request.thread_ref,
            "link": f"/factory/evals/cases/{case.id}/runs/{run_id}/threads/{index}",
            "score": asdict(score),
            "modelName": reply.model_name if reply else None,
            "text": (reply.text if reply else "")[:MAX_KEPT_TEXT],
            "toolCalls": [c.model_dump(by_alias=True) for c in reply.tool_calls] if reply else [],
            "at": self.clock().isoformat(),
        }
