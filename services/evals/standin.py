"""A stand-in agent over real HTTP, scripted per prompt, for tests and the demo.

It speaks both ways an eval run reaches an agent: our protocol (``POST /v1/reply``,
``contracts/agent.py``) and an OpenAI-compatible subset (``POST /v1/chat/completions``), so
each client is tested against a real server rather than a mock. A script is JSON::

    {
      "modelName": "standin-1",
      "rules": [
        {"when": "opening hours",
         "text": "Mon–Fri 8–18.",
         "toolCalls": [{"name": "search", "arguments": "{\\"q\\": \\"hours\\"}",
                        "result": "Mon–Fri 8–18"}]},
        {"when": "phone number",
         "replies": [{"text": "+41 44 000 00 00", "toolCalls": [{"name": "lookup"}]},
                     {"text": "I don't know."}]},
        {"when": "legacy", "modelName": "standin-small", "text": "Answered on another model."},
        {"when": "pinned", "error": "model-configuration", "message": "not served here"}
      ],
      "default": {"text": "I don't know."}
    }

``"delaySeconds"`` makes every answer take that long. ``GET /requests`` lists what was received.
The first rule whose ``when`` is in the prompt (case-insensitively) answers, else ``default``;
a rule with ``"forModel"`` answers only a request that asks for that model (two runners of a
comparison, one stand-in).
A reply answers on its ``modelName`` when it pins one (a reply on another model, SPEC W71),
else on the model the request asked for, else on the script's ``modelName``. A rule with
``replies`` hands them out round-robin, counted per prompt, so a test can script "3 of 5
conversations look things up". ``"error": "model-configuration"`` answers our protocol's 422
(SPEC W70) and Chat Completions' 404 ``model_not_found``. Every request received is kept in
``app.state.requests`` for tests to read.
"""

import argparse
import asyncio
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from contracts.agent import AgentError, AgentReply, AgentRequest
from contracts.reports import ToolCallRecord
from contracts.scalars import Ref

HARNESS = "standin"


class _ScriptModel(BaseModel):
    # A typo in a script is refused, not silently ignored.
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class ScriptedReply(_ScriptModel):
    """One reply: text and tool calls, or the model-configuration error."""

    text: str = ""
    tool_calls: list[ToolCallRecord] = Field(default_factory=list, alias="toolCalls")
    model_name: Ref | None = Field(
        default=None, alias="modelName", description="Answer on this model whatever was asked."
    )
    harness: Ref | None = None
    error: Literal["model-configuration"] | None = None
    message: str | None = Field(default=None, description="The error's message.")
    # Sent as written, checked by nobody here: a script can send a malformed one (D263).
    trace_id: str | None = Field(default=None, alias="traceId")
    span_id: str | None = Field(default=None, alias="spanId")


class Scripted(ScriptedReply):
    """A reply, or ``replies`` handed out round-robin per prompt."""

    replies: list[ScriptedReply] = Field(default_factory=list)

    @model_validator(mode="after")
    def _replies_or_one_reply(self) -> "Scripted":
        inline = self.model_fields_set & set(ScriptedReply.model_fields)
        if self.replies and inline:
            raise ValueError(f"give either replies or {', '.join(sorted(inline))}, not both")
        return self


class Rule(Scripted):
    when: str = Field(min_length=1, description="Case-insensitive substring of the prompt.")
    for_model: Ref | None = Field(
        default=None, alias="forModel", description="Only when the request asks this model."
    )


class Script(_ScriptModel):
    model_name: Ref = Field(default="standin-1", alias="modelName")
    rules: list[Rule] = Field(default_factory=list)
    default: Scripted = Scripted(text="I don't know.")
    delay_seconds: float = Field(
        default=0.0, ge=0, alias="delaySeconds", description="Every answer takes this long."
    )


@dataclass(frozen=True)
class ReceivedRequest:
    """A request as the stand-in received it, before any validation."""

    path: str
    body: Any
    authorization: str | None


def load_script(path: Path) -> Script:
    return Script.model_validate_json(path.read_text(encoding="utf-8"))


class _Turns:
    """Which reply each (rule, prompt) is at: the round-robin state of one app."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.counts: dict[tuple[int, str], int] = {}

    def pick(self, prompt: str, requested: str | None = None) -> ScriptedReply:
        folded = prompt.casefold()
        index, scripted = next(
            (
                (i, rule)
                for i, rule in enumerate(self.script.rules)
                if rule.when.casefold() in folded and rule.for_model in (None, requested)
            ),
            (-1, self.script.default),
        )
        if not scripted.replies:
            return scripted
        turn = self.counts.get((index, prompt), 0)
        self.counts[(index, prompt)] = turn + 1
        return scripted.replies[turn % len(scripted.replies)]

    def model(self, scripted: ScriptedReply, requested: str | None) -> str:
        return scripted.model_name or requested or self.script.model_name


def _last_user_text(messages: Any) -> str | None:
    """The prompt of a Chat Completions request: its last user message, as plain text."""
    if not isinstance(messages, list):
        return None
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):  # content parts
                return "".join(
                    str(part.get("text", "")) for part in content if isinstance(part, dict)
                )
    return None


def build_standin_app(script: Script) -> FastAPI:
    app = FastAPI(title="Feedback Loop stand-in agent", version="1")
    turns = _Turns(script)
    requests: list[ReceivedRequest] = []
    app.state.script, app.state.requests = script, requests

    async def receive(http: Request) -> Any:
        raw = await http.body()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", errors="replace")
        requests.append(ReceivedRequest(http.url.path, body, http.headers.get("authorization")))
        await asyncio.sleep(script.delay_seconds)  # a slow agent: a test can stop a run midway
        return body

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/requests")
    async def received() -> list[dict[str, Any]]:
        """What the stand-in received, for a test in another process to read."""
        return [{"path": r.path, "body": r.body} for r in requests]

    @app.post("/v1/reply")
    async def reply(http: Request) -> JSONResponse:
        """Our agent protocol: an ``AgentRequest`` in, an ``AgentReply`` out."""
        try:
            request = AgentRequest.model_validate(await receive(http))
        except ValidationError as error:
            return JSONResponse({"detail": json.loads(error.json(include_url=False))}, 422)
        scripted = turns.pick(request.prompt, request.requested_model)
        model = turns.model(scripted, request.requested_model)
        if scripted.error == "model-configuration":  # SPEC W70
            message = scripted.message or f"the stand-in cannot serve model {model}"
            refusal = AgentError(error="model-configuration", message=message)
            return JSONResponse(refusal.model_dump(mode="json"), 422)
        answer = AgentReply(
            text=scripted.text,
            tool_calls=scripted.tool_calls,
            model_name=model,
            requested_model_name=request.requested_model,
            harness=scripted.harness or HARNESS,
        )
        links = {"traceId": scripted.trace_id, "spanId": scripted.span_id}
        sent = {k: v for k, v in links.items() if v is not None}
        return JSONResponse(answer.model_dump(mode="json", by_alias=True) | sent)

    @app.post("/v1/chat/completions")
    async def chat_completions(http: Request) -> JSONResponse:
        """The subset of OpenAI Chat Completions an eval run uses: one turn, no streaming."""
        body = await receive(http)
        prompt = _last_user_text(body.get("messages") if isinstance(body, dict) else None)
        if not prompt:
            error = {"code": "invalid_request", "message": "messages need a user message"}
            return JSONResponse({"error": error}, 400)
        requested = body.get("model") if isinstance(body.get("model"), str) else None
        scripted = turns.pick(prompt, requested)
        model = turns.model(scripted, requested)
        if scripted.error == "model-configuration":  # SPEC W70, as OpenAI says it
            message = scripted.message or f"The model `{model}` does not exist."
            error = {"code": "model_not_found", "type": "invalid_request_error", "message": message}
            return JSONResponse({"error": error}, 404)
        message_body: dict[str, Any] = {"role": "assistant", "content": scripted.text}
        if scripted.tool_calls:
            message_body["tool_calls"] = [
                {
                    "id": f"call_{len(requests)}_{i}",
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for i, call in enumerate(scripted.tool_calls)
            ]
        completion = {
            "id": f"chatcmpl-standin-{len(requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": message_body,
                    "finish_reason": "tool_calls" if scripted.tool_calls else "stop",
                }
            ],
        }
        return JSONResponse(completion)

    return app


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m services.evals.standin",
        description="Serve a stand-in agent, scripted per prompt, on our agent protocol "
        "(POST /v1/reply) and OpenAI-compatible Chat Completions (POST /v1/chat/completions).",
        epilog="Point an eval run at it with the agent base URL http://HOST:PORT (kind http) or "
        "http://HOST:PORT/v1 (kind openai).",
    )
    parser.add_argument(
        "--script",
        type=Path,
        help="JSON script: rules {when, text, toolCalls, modelName, harness, error, replies} "
        "and a default reply (see the module docstring). Without it every prompt gets the "
        "default reply.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=8765, help="port to listen on")
    parser.add_argument("--log-level", default="info", help="uvicorn's log level")
    args = parser.parse_args(argv)
    try:
        script = load_script(args.script) if args.script else Script()
    except (OSError, ValidationError) as error:
        parser.error(f"cannot use the script {args.script}: {error}")
    uvicorn.run(build_standin_app(script), host=args.host, port=args.port, log_level=args.log_level)


if __name__ == "__main__":
    main()
