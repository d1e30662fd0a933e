"""Both agent clients against the stand-in agent, served by a real uvicorn on a free port."""

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from contracts.agent import AgentRequest
from services.evals.agents import (
    AgentClient,
    AgentUnavailable,
    HttpAgentClient,
    ModelConfigurationError,
    OpenAIChatClient,
    agent_client_from_settings,
)
from services.evals.standin import ReceivedRequest, Script, build_standin_app
from tests.standin import free_port, served

SCRIPT = Script.model_validate(
    {
        "modelName": "standin-default",
        "rules": [
            {
                "when": "opening hours",
                "text": "Monday to Friday, 8 to 18.",
                "toolCalls": [
                    {"name": "search", "arguments": '{"q": "opening hours"}', "result": "8-18"}
                ],
            },
            {"when": "legacy", "modelName": "standin-small", "text": "Answered anyway."},
            {"when": "pinned model", "error": "model-configuration", "message": "not served"},
            {
                "when": "phone number",
                "replies": [
                    {"text": "+41 44 000 00 01", "toolCalls": [{"name": "lookup"}]},
                    {"text": "+41 44 000 00 02", "toolCalls": [{"name": "lookup"}]},
                    {"text": "+41 44 000 00 03", "toolCalls": [{"name": "lookup"}]},
                    {"text": "I think it is +41 44 999 99 99."},
                    {"text": "I don't know."},
                ],
            },
        ],
        "default": {"text": "I don't know."},
    }
)


@dataclass
class StandIn:
    url: str
    requests: list[ReceivedRequest]


@pytest.fixture
async def standin() -> AsyncIterator[StandIn]:
    """A stand-in of this test's own (fresh round-robin state and request log)."""
    app = build_standin_app(SCRIPT)
    async with served(app) as port:
        yield StandIn(f"http://127.0.0.1:{port}", app.state.requests)


def ask(prompt: str, *, model: str | None = None, context: list[str] | None = None) -> AgentRequest:
    return AgentRequest(
        prompt=prompt,
        context=context or [],
        requested_model=model,
        effort="high",
        thread_ref="threads/t-1",
        submitter="people/alice",
    )


def both_clients(standin: StandIn, model: str | None = None) -> list[AgentClient]:
    return [
        HttpAgentClient(standin.url, timeout=10),
        OpenAIChatClient(f"{standin.url}/v1", api_key="sk-test", model=model, timeout=10),
    ]


async def test_a_scripted_reply_with_tool_calls_comes_back_over_our_protocol(
    standin: StandIn,
) -> None:
    reply = await HttpAgentClient(standin.url, api_key="agent-key", timeout=10).reply(
        ask("What are the opening hours?", context=["docs/hours.md"])
    )

    assert reply.text == "Monday to Friday, 8 to 18."
    assert [(c.name, c.arguments, c.result) for c in reply.tool_calls] == [
        ("search", '{"q": "opening hours"}', "8-18")
    ]
    assert (reply.model_name, reply.requested_model_name) == ("standin-default", None)
    assert reply.harness == "standin"
    [received] = standin.requests
    assert received.path == "/v1/reply"
    assert received.authorization == "Bearer agent-key"
    assert received.body["threadRef"] == "threads/t-1"
    assert received.body["submitter"] == "people/alice"
    assert received.body["context"] == ["docs/hours.md"]


async def test_chat_completions_tool_calls_are_captured_without_results(
    standin: StandIn,
) -> None:
    client = OpenAIChatClient(f"{standin.url}/v1", api_key="sk-test", model="gpt-x", timeout=10)

    reply = await client.reply(
        ask("What are the opening hours?", context=["docs/hours.md", "docs/faq.md"])
    )

    assert reply.text == "Monday to Friday, 8 to 18."
    assert [(c.name, c.arguments, c.result) for c in reply.tool_calls] == [
        ("search", '{"q": "opening hours"}', "")
    ]
    assert (reply.model_name, reply.requested_model_name) == ("gpt-x", None)
    assert reply.harness == "openai-chat"
    [received] = standin.requests
    assert received.path == "/v1/chat/completions"
    assert received.authorization == "Bearer sk-test"
    assert received.body == {
        "model": "gpt-x",
        "messages": [
            {
                "role": "user",
                "content": "What are the opening hours?\n\nContext: docs/hours.md, docs/faq.md",
            }
        ],
        "reasoning_effort": "high",
        "user": "people/alice",
    }


async def test_the_requested_model_is_honoured_by_both_clients(standin: StandIn) -> None:
    for client in both_clients(standin, model="configured-model"):
        reply = await client.reply(ask("What are the opening hours?", model="pinned-large"))

        assert reply.model_name == "pinned-large"
    assert standin.requests[0].body["requestedModel"] == "pinned-large"
    assert standin.requests[1].body["model"] == "pinned-large"


async def test_a_reply_on_another_model_keeps_the_model_that_answered(standin: StandIn) -> None:
    for client in both_clients(standin):
        reply = await client.reply(ask("Ask the legacy system", model="pinned-large"))

        assert (reply.model_name, reply.requested_model_name) == ("standin-small", "pinned-large")


async def test_a_model_configuration_error_is_raised_by_both_clients(standin: StandIn) -> None:
    for client in both_clients(standin):
        with pytest.raises(ModelConfigurationError):
            await client.reply(ask("Answer on the pinned model", model="pinned-large"))
    assert len(standin.requests) == 2


async def test_an_unreachable_agent_is_unavailable_on_both_clients() -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there any more
    for client in (
        HttpAgentClient(url, timeout=5),
        OpenAIChatClient(f"{url}/v1", api_key=None, model="gpt-x", timeout=5),
    ):
        with pytest.raises(AgentUnavailable, match="ConnectError"):
            await client.reply(ask("What are the opening hours?"))


async def test_a_base_url_that_serves_no_agent_is_unavailable_not_a_model_error(
    standin: StandIn,
) -> None:
    # A 404 that does not name a model is a wrong base URL, not a model the agent lacks.
    for client in (
        HttpAgentClient(f"{standin.url}/elsewhere", timeout=10),
        OpenAIChatClient(standin.url, api_key=None, model="gpt-x", timeout=10),
    ):
        with pytest.raises(AgentUnavailable, match="HTTP 404"):
            await client.reply(ask("What are the opening hours?"))


async def test_the_openai_client_without_any_model_sends_nothing(standin: StandIn) -> None:
    client = OpenAIChatClient(f"{standin.url}/v1", api_key="sk-test", model=None, timeout=10)

    with pytest.raises(ModelConfigurationError, match="no model"):
        await client.reply(ask("What are the opening hours?"))
    assert standin.requests == []


async def test_round_robin_replies_cycle_per_prompt(standin: StandIn) -> None:
    # Counted per prompt: each client asks its own, so neither moves the other's turn.
    for client, prompt in zip(
        both_clients(standin, model="gpt-x"),
        ["What is the phone number?", "Which phone number should I call?"],
        strict=True,
    ):
        replies = [await client.reply(ask(prompt)) for _ in range(6)]

        looked_up = [bool(reply.tool_calls) for reply in replies]
        assert looked_up == [True, True, True, False, False, True]
        assert replies[5].text == replies[0].text == "+41 44 000 00 01"


def test_no_base_url_configures_no_agent() -> None:
    assert agent_client_from_settings(None, None, None, "gpt-x") is None
    assert agent_client_from_settings("openai", "", "key", "gpt-x") is None


def test_the_agent_kind_chooses_the_client() -> None:
    http = agent_client_from_settings(None, "http://agent", None, None)
    openai = agent_client_from_settings("openai", "http://agent/v1", "key", None)

    assert isinstance(http, HttpAgentClient)
    assert not http.needs_model
    assert isinstance(openai, OpenAIChatClient)
    assert openai.needs_model
    with pytest.raises(ValueError, match="http, openai"):
        agent_client_from_settings("grpc", "http://agent", None, None)


def test_a_script_that_mixes_replies_and_a_reply_is_refused() -> None:
    with pytest.raises(ValueError, match="either replies or text"):
        Script.model_validate(
            {"rules": [{"when": "x", "text": "one", "replies": [{"text": "two"}]}]}
        )
