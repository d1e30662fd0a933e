"""Request bodies: their bounds, their media type, and the commands read from them.

Routes read their bodies themselves (FastAPI does not see them; ``services.edge.openapi``
declares them): at most ``MAX_BODY_BYTES`` (``MAX_BATCH_BYTES`` for a batch), as JSON by the
rules of ``services.edge.json_bodies``, strictly typed into a command.
"""

import json
import re
from typing import Any, TypeVar

import orjson
from fastapi import Request
from pydantic import BaseModel
from starlette.types import Message, Receive

from contracts.errors import Refused
from services.bus.command_bodies import command_from
from services.edge.json_bodies import read_body
from services.edge.problems import TooLarge, UnsupportedMediaType

MAX_BODY_BYTES = 64 * 1024
# A batch (``POST /factory/feedback:batch``): a thousand items of the largest a RecordFeedback
# can be, with room for escapes.
MAX_BATCH_BYTES = 4 * 1024 * 1024

T = TypeVar("T", bound=BaseModel)


def bounded_receive(receive: Receive, limit: int) -> Receive:
    """``receive``, refusing (413) a request body once it passes ``limit``: a route reads its
    body whole before its own bound, so without this a body of hundreds of megabytes would be
    held in memory before it was refused."""
    size = 0

    async def receive_bounded() -> Message:
        nonlocal size
        message = await receive()
        if message["type"] == "http.request":
            size += len(message.get("body", b""))
            if size > limit:
                raise TooLarge(limit)
        return message

    return receive_bounded


# A media type as RFC 9110 spells it, ``type/subtype`` of token characters, parameters aside.
_MEDIA_TYPE = re.compile(r"[!#$%&'*+.^_`|~0-9a-z-]+/[!#$%&'*+.^_`|~0-9a-z-]+")


def media_type(request: Request, accepted: tuple[str, ...] | None = None) -> str:
    """The body's media type (lower case, parameters aside) if it is one of ``accepted`` (any
    well-formed one when None); else 415, naming the types the route takes. A missing
    Content-Type is refused too where ``accepted`` names types: the client said nothing of
    what it sent."""
    given = request.headers.get("content-type", "")
    essence = given.split(";")[0].strip().lower()
    if not _MEDIA_TYPE.fullmatch(essence) or (accepted is not None and essence not in accepted):
        raise UnsupportedMediaType(given, accepted or ("a media type (type/subtype)",))
    return essence


async def no_body(request: Request) -> None:
    """A route that takes no body refuses one instead of ignoring what the client meant."""
    if await request.body():
        raise Refused("this route takes no body", field="body")


async def read_json(request: Request, limit: int = MAX_BODY_BYTES) -> Any:
    """The request body as JSON, at most ``limit`` bytes (``services.edge.json_bodies``)."""
    return bounded_body(await request.body(), limit)[0]


def bounded_body(raw: bytes, limit: int = MAX_BODY_BYTES) -> tuple[Any, bool]:
    """``read_body`` of a body of at most ``limit`` bytes; a longer one is refused."""
    if len(raw) > limit:
        raise TooLarge(limit)
    return read_body(raw)


async def read_command(request: Request, model: type[T], stamped: frozenset[str]) -> T:
    """A command from the request body; stamped fields are refused by name."""
    return command_of(await request.body(), model, stamped)


def command_of(raw: bytes, model: type[T], stamped: frozenset[str]) -> T:
    """A command from a request body (``read_command``'s reading, of the bytes)."""
    data, by_orjson = bounded_body(raw)
    # Strict with ourselves (STYLE 12): JSON types as the schema publishes them, nothing
    # coerced ("3", 4.0 or true for an integer, 0 for a boolean are refused). The strict
    # reading is of JSON text: what orjson read it writes back as it was; what only the
    # standard parser took (an infinity from 1e400, which orjson would write as null) is
    # written by json.dumps.
    as_json = orjson.dumps if by_orjson else json.dumps
    command = command_from(data, model, stamped, strict=True, as_json=as_json)
    assert isinstance(command, model)
    return command
