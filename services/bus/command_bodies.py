"""A command read from a decoded body (HTTP or a CloudEvent's data), the same way for every
entry point."""

import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ValidationError

from contracts.errors import Refused


def command_from(
    data: object,
    model: type[BaseModel],
    stamped: frozenset[str],
    *,
    strict: bool | None = None,
    as_json: Callable[[Any], str | bytes] = json.dumps,
) -> BaseModel:
    """A command from a decoded body (HTTP or a CloudEvent's data), the same for every entry
    point: stamped fields are refused by name before anything else is read.

    ``strict=None`` reads as the model is declared; ``True`` reads our own commands strictly
    (JSON types only, no coercion, unknown fields refused); ``False`` reads another service's
    events tolerantly (unknown fields kept on the model and ignored). ``as_json`` writes the
    data for a strict reading: a caller that knows its data holds only finite numbers may pass
    a faster writer (``services.kafka.inbound.fast_cloudevent_reading.data_as_json``)."""
    if not isinstance(data, dict):
        raise Refused("the command must be a JSON object", field="body")
    for name in sorted(stamped & data.keys()):
        raise Refused(f"{name} is stamped by the server; do not send it", field=name)
    try:
        if strict is None:
            return model.model_validate(data)
        if strict:
            # JSON mode: strict Python mode would want enum instances, not their values.
            return model.model_validate_json(as_json(data), strict=True, extra="forbid")
        return model.model_validate(data, extra="allow")
    except ValidationError as exc:
        problems = [
            {"field": ".".join(str(p) for p in e["loc"]) or "body", "message": e["msg"]}
            for e in exc.errors()
        ]
        first = problems[0]
        raise Refused(
            f"{first['field']}: {first['message']}", field=first["field"], problems=problems
        ) from None
