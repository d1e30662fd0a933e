"""How an eval run reaches the agent under test: one interface, three ways to speak to an agent.

``AgentClient.reply(AgentRequest) -> AgentReply`` is all a run needs. ``HttpAgentClient``
speaks our own protocol (``contracts/agent.py``); ``OpenAIChatClient`` speaks OpenAI-compatible
Chat Completions, so any such endpoint can be evaluated; the stand-in agent
(``services/evals/standin.py``) serves both over real HTTP for tests and the demo.

A reply can fail in two ways, and they count differently::

    AgentUnavailable         the thread failed: network error, timeout, 5xx, unparseable reply
    ModelConfigurationError  the agent cannot serve the requested model: a non-answer, never
                             an invention (SPEC W70)

No configured agent (``agent_client_from_settings`` answers None), or a client that needs a
model and has none, means the run starts nothing and says so (SPEC W69).
"""

import json
from typing import Any, Protocol

import httpx
from pydantic import BaseModel, ValidationError

from contracts.agent import AgentError, AgentReply, AgentRequest
from contracts.reports import MAX_TOOL_TEXT, ToolCallRecord
from contracts.trace_links import GenAiAttributes, neighbours_links

KINDS = ("http", "openai")


class AgentUnavailable(Exception):
    """The agent did not answer usably: the run's thread failed, it is not a non-answer."""


class ModelConfigurationError(Exception):
    """The agent cannot serve the requested model: the reply is a non-answer (SPEC W70)."""


class AgentClient(Protocol):
    needs_model: bool
    """True when a model must be known before a run can start (SPEC W69)."""

    async def reply(self, request: AgentRequest) -> AgentReply: ...


def _bearer(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


async def _post(
    client: httpx.AsyncClient | None,
    url: str,
    body: dict[str, Any],
    headers: dict[str, str],
    timeout: float,
) -> httpx.Response:
    """POST on the caller's client if it brought one, else on a client of this call's own, so
    a client built from settings holds no connection pool that someone must remember to close."""
    try:
        if client is not None:
            return await client.post(url, json=body, headers=headers, timeout=timeout)
        async with httpx.AsyncClient(timeout=timeout) as own:
            return await own.post(url, json=body, headers=headers)
    except (httpx.HTTPError, httpx.InvalidURL) as error:
        raise AgentUnavailable(f"{url}: {type(error).__name__}: {error}") from error


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


class HttpAgentClient:
    """Our own agent protocol: ``POST {base_url}/v1/reply`` with an ``AgentRequest``.

    ``model`` is asked for when a request pins none; without it the agent chooses, so no model
    need be known before a run starts.
    """

    needs_model: bool = False

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        model: str | None = None,
        timeout: float = 120.0,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self.url = base_url.rstrip("/") + "/v1/reply"
        self.api_key, self.model, self.timeout, self._client = api_key, model, timeout, client

    async def reply(self, request: AgentRequest) -> AgentReply:
        if request.requested_model is None and self.model:
            request = request.model_copy(update={"requested_model": self.model})
        body = request.model_dump(mode="json", by_alias=True)
        response = await _post(self._client, self.url, body, _bearer(self.api_key), self.timeout)
        if response.status_code == 200:
            try:
                payload = neighbours_links(_clipped_calls(response.json()))
                return AgentReply.model_validate(payload)
            except ValueError as error:  # not JSON, or not an AgentReply
                raise AgentUnavailable(f"{self.url}: unparseable reply: {error}") from error
        try:
            refusal = AgentError.model_validate(_json(response))
        except ValidationError:
            raise AgentUnavailable(
                f"{self.url}: HTTP {response.status_code}: {response.text[:500]}"
            ) from None
        if response.status_code == 422 and refusal.error == "model-configuration":
            raise ModelConfigurationError(refusal.message)  # SPEC W70
        raise AgentUnavailable(f"{self.url}: HTTP {response.status_code}: {refusal.message}")


class _ChatFunction(BaseModel):
    name: str
    arguments: str | dict[str, Any] = ""


class _ChatToolCall(BaseModel):
    function: _ChatFunction


class _ChatMessage(BaseModel):
    content: str | None = None
    tool_calls: list[_ChatToolCall] | None = None


class _ChatChoice(BaseModel):
    message: _ChatMessage


class _ChatCompletion(BaseModel):
    """The part of a Chat Completions response a reply is made of; the rest is ignored."""

    id: str | None = None
    model: str
    choices: list[_ChatChoice]


def _error_of(payload: Any) -> tuple[str, str]:
    """(code, message) from OpenAI's ``{"error": {...}}`` or the flat shapes of compatible
    servers (``{"error": "..."}``, ``{"message": ..., "code": ...}``)."""
    if not isinstance(payload, dict):
        return "", ""
    inner = payload.get("error", payload)
    if isinstance(inner, str):
        return "", inner
    if not isinstance(inner, dict):
        return "", ""
    return str(inner.get("code") or inner.get("type") or ""), str(inner.get("message") or "")


def _names_the_model(code: str, message: str) -> bool:
    lowered = message.lower()
    return code == "model_not_found" or "does not exist" in lowered or "model" in lowered


def _clip(text: str) -> str:
    return text if len(text) <= MAX_TOOL_TEXT else text[: MAX_TOOL_TEXT - 1] + "…"


def _clipped_calls(payload: Any) -> Any:
    """A long tool result is kept clipped (as the OpenAI path does), not a failed reply:
    the head of a result is where a node's path shows, which is what scoring reads."""
    calls = payload.get("toolCalls") if isinstance(payload, dict) else None
    if not isinstance(calls, list):
        return payload
    clipped = [
        {k: _clip(v) if k in ("arguments", "result") and isinstance(v, str) else v
         for k, v in call.items()} if isinstance(call, dict) else call
        for call in calls
    ]  # fmt: skip
    return {**payload, "toolCalls": clipped}


class OpenAIChatClient:
    """An OpenAI-compatible Chat Completions endpoint: ``POST {base_url}/chat/completions``.

    One turn: the prompt (with a "Context: …" line naming the context paths) as the user
    message. Chat Completions returns the tool calls a model asked for, not their results, so
    each ``ToolCallRecord`` has the call's name and arguments and an empty result. The model
    must be known before any request (the request's, else the client's): without one nothing
    is sent (SPEC W69). The model named in the response is kept as the one that answered, also
    when it is not the one asked for (SPEC W71 decides what that means).

    A 404 or 400 whose error names the model is a model-configuration error (SPEC W70); a 404
    that does not (no such endpoint at this base URL) and every other failure is
    ``AgentUnavailable``.
    """

    needs_model: bool = True
    harness = "openai-chat"

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None,
        model: str | None,
        timeout: float = 120.0,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.api_key, self.model, self.timeout, self._client = api_key, model, timeout, client

    async def reply(self, request: AgentRequest) -> AgentReply:
        model = request.requested_model or self.model
        if not model:  # SPEC W69: start nothing without a model
            raise ModelConfigurationError(
                "no model: the request pins none and the OpenAI-compatible agent has none "
                "configured"
            )
        content = request.prompt
        if request.context:
            content += "\n\nContext: " + ", ".join(request.context)
        body = {
            "model": model,
            "messages": [{"role": "user", "content": content}],
            "reasoning_effort": request.effort,
            "user": request.submitter,
        }
        response = await _post(self._client, self.url, body, _bearer(self.api_key), self.timeout)
        if response.status_code != 200:
            code, message = _error_of(_json(response))
            if response.status_code in (400, 404) and _names_the_model(code, message):
                raise ModelConfigurationError(message or f"model {model!r} is not served")
            detail = message or response.text[:500]
            raise AgentUnavailable(f"{self.url}: HTTP {response.status_code}: {detail}")
        try:
            completion = _ChatCompletion.model_validate(response.json())
            answer = completion.choices[0].message
            return AgentReply(
                text=answer.content or "",
                tool_calls=[
                    ToolCallRecord(name=call.function.name, arguments=_arguments(call.function))
                    for call in answer.tool_calls or []
                ],
                model_name=completion.model,
                requested_model_name=model if model != completion.model else None,
                harness=self.harness,
                gen_ai=chat_attributes(model, completion),
            )
        except (ValueError, IndexError) as error:  # not JSON, no choice, or not a reply
            raise AgentUnavailable(f"{self.url}: unparseable reply: {error}") from error


def chat_attributes(model: str, completion: _ChatCompletion) -> GenAiAttributes | None:
    """The GenAI attributes a Chat Completions answer names (D262): the model asked for and
    the one that answered, and the response's id; any that breaks the rules is left out."""
    given = {
        "gen_ai.request.model": model,
        "gen_ai.response.model": completion.model,
        "gen_ai.response.id": completion.id,
    }
    kept = neighbours_links({"genAi": {k: v for k, v in given.items() if v is not None}})
    if "genAi" in kept:
        return GenAiAttributes.model_validate(kept["genAi"])
    return None


def _arguments(function: _ChatFunction) -> str:
    """The arguments as the JSON string given (some compatible servers send an object), clipped
    to what a ``ToolCallRecord`` holds."""
    raw = function.arguments
    return _clip(raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False))


def agent_client_from_settings(
    kind: str | None, base_url: str | None, api_key: str | None, model: str | None
) -> AgentClient | None:
    """The configured agent client, or None when no agent is configured (no base URL): the
    run then starts nothing and says so (SPEC W69).

    ``kind`` is "http" (our protocol, the default) or "openai" (Chat Completions).
    """
    if not base_url:
        return None
    chosen = (kind or "http").strip().lower()
    if chosen == "http":
        return HttpAgentClient(base_url, api_key=api_key, model=model)
    if chosen == "openai":
        return OpenAIChatClient(base_url, api_key=api_key, model=model)
    raise ValueError(f"unknown agent kind {kind!r}: use one of {', '.join(KINDS)}")
