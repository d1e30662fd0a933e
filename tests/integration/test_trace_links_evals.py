"""Trace links of eval conversations (D263): an agent's reply may name where it sits in the
agent's traces; the run's conversation keeps it and answers it. A malformed one is dropped,
never a failed reply; a Chat Completions answer gives its GenAI attributes."""

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from contracts.agent import AgentRequest
from services.evals.agents import HttpAgentClient, OpenAIChatClient
from services.evals.standin import Script, build_standin_app
from tests.integration.test_nightly import NODE, SCRIPT, Door, auth, confirmed_case, door
from tests.standin import served, standin_agent

__all__ = ["door"]  # the nightly tests' fixture, here with an agent that names its traces

TRACE, SPAN = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
TRACED = {
    **SCRIPT,
    "rules": [
        {
            "when": "Stundenansatz",
            "text": "Konzept-Ansatz CHF 150 steht im Firmenprofil.",
            "toolCalls": [{"name": "Get", "arguments": NODE, "result": "CHF 150"}],
            "traceId": TRACE,
            "spanId": SPAN,
        },
        {"when": "broken", "text": "Fine.", "traceId": TRACE.upper(), "spanId": SPAN},
        {"when": "span only", "text": "Fine.", "spanId": SPAN},
    ],
}


@pytest.fixture
def standin(tmp_path: Path) -> Iterator[str]:
    with standin_agent(TRACED, tmp_path) as url:
        yield url


@pytest.fixture
async def agent() -> AsyncIterator[str]:
    async with served(build_standin_app(Script.model_validate(TRACED))) as port:
        yield f"http://127.0.0.1:{port}"


def ask(prompt: str) -> AgentRequest:
    return AgentRequest.model_validate(
        {"prompt": prompt, "threadRef": "threads/t-1", "submitter": "people/alice"}
    )


async def test_an_eval_conversation_keeps_the_trace_the_agent_named(door: Door) -> None:
    case_id = await confirmed_case(door, "Welchen Stundenansatz verrechne ich?")
    ran = await door.http.post(
        f"/factory/evals/cases/{case_id}/runs", json={"conversations": 1}, headers=auth(door.keys.a)
    )
    assert ran.status_code == 201, ran.text
    run_id = ran.json()["runId"]
    thread = await door.http.get(
        f"/factory/evals/cases/{case_id}/runs/{run_id}/threads/1",
        params={"minPosition": ran.json()["position"]},
        headers=auth(door.keys.a),
    )
    assert thread.status_code == 200, thread.text
    body = thread.json()
    assert (body["traceId"], body["spanId"], body["genAi"]) == (TRACE, SPAN, None)


async def test_a_malformed_trace_in_a_reply_is_dropped_and_the_reply_kept(agent: str) -> None:
    client = HttpAgentClient(agent, timeout=10)
    broken = await client.reply(ask("broken"))
    assert (broken.text, broken.trace_id, broken.span_id) == ("Fine.", None, None)
    alone = await client.reply(ask("span only"))  # a span without its trace names nothing
    assert (alone.text, alone.trace_id, alone.span_id) == ("Fine.", None, None)
    traced = await client.reply(ask("Stundenansatz?"))
    assert (traced.trace_id, traced.span_id) == (TRACE, SPAN)


async def test_a_chat_completion_gives_its_genai_attributes(agent: str) -> None:
    client = OpenAIChatClient(f"{agent}/v1", api_key=None, model="gpt-x", timeout=10)
    reply = await client.reply(ask("Stundenansatz?"))
    assert reply.gen_ai is not None
    attributes = reply.gen_ai.as_attributes()
    assert attributes.pop("gen_ai.response.id").startswith("chatcmpl-standin-")
    assert attributes == {"gen_ai.request.model": "gpt-x", "gen_ai.response.model": "gpt-x"}
