"""The structured-mode CloudEvent the relay publishes, written by hand: the fast twin of the
CloudEvents SDK's ``to_structured_event``.

Reference (the plain path): ``to_structured_event(CloudEvent(attributes, data)).value`` of the
SDK, with ``data = to_contract(event).model_dump(mode="json", by_alias=True)``. Here the JSON
is written in one pass of orjson, the payload serialized by pydantic (or by the publication's
``PayloadWriter``) as a fragment of it, because the SDK's event object and encoder cost more
than everything else the relay does for an event. What the reference writes and what this
writes read back as the same attributes in the same order and the same JSON values; only the
spacing differs, and non-ASCII characters travel as UTF-8 instead of ``\\u`` escapes
(``tests/unit/test_cloudevents``, a property test on arbitrary texts).

``PayloadWriter`` is the second half of the twin: a publication may bring a writer of its
payload's JSON that skips building and validating the contract, for the values where it gives
exactly what the contract would (``tests/unit/test_publication_json`` holds it to the contract
on arbitrary values, hostile ones included).
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
from pydantic import BaseModel


@dataclass(frozen=True)
class PayloadWriter:
    """A payload's JSON written without building its contract: ``write`` gives byte for byte
    what ``mapping(event).model_dump_json(by_alias=True)`` gives, or None where that is not
    certain (then the contract is built and validated, and a refusal parks the
    event). It vouches for that mapping only: a publication with another mapping builds its
    contract."""

    mapping: Callable[[Any], BaseModel]
    write: Callable[[Any], bytes | None]


def cloudevent_json(
    attributes: dict[str, Any],
    to_contract: Callable[[Any], BaseModel],
    writer: PayloadWriter | None,
    event: Any,
) -> bytes:
    """The CloudEvent in structured JSON mode: the attributes in their order (``time`` in RFC
    3339, ``Z`` for UTC, as the SDK writes it), then ``specversion`` and the payload as
    ``data`` (its wire aliases, JSON values as ``model_dump(mode="json")``). Takes over
    ``attributes``."""
    attributes["specversion"] = "1.0"
    attributes["data"] = orjson.Fragment(payload_json(to_contract, writer, event))
    return orjson.dumps(attributes, option=orjson.OPT_UTC_Z)


def payload_json(
    to_contract: Callable[[Any], BaseModel], writer: PayloadWriter | None, event: Any
) -> bytes | str:
    """The payload's JSON: the writer's where it vouches for the bytes, else the contract
    built, validated (a refusal parks the event) and dumped by pydantic."""
    if (
        writer is not None
        and writer.mapping is to_contract
        and (written := writer.write(event)) is not None
    ):
        return written
    return to_contract(event).model_dump_json(by_alias=True)
