"""The parameters routes share: query, path and header values, each with its bounds, and the
command id an ``Idempotency-Key`` makes."""

import re
import uuid
from datetime import datetime
from typing import Annotated

from fastapi import Header, Path, Query
from pydantic import AfterValidator, BeforeValidator
from starlette.convertors import PathConvertor, register_url_convertor

from contracts.scalars import within_utc_years

# ``?minPosition=`` on reads: wait until the caller's own write is visible
# (``services.edge.waits``). The value is the opaque ``position`` a write answered
# (services/edge/positions.py), never a number.
MinPosition = Annotated[
    str | None,
    Query(
        alias="minPosition",
        min_length=1,
        max_length=200,
        description="The `position` a write answered: wait until that write is visible",
    ),
]
# An id in a path that names what a neighbour's event named (a run, an agent, an artifact):
# no longer than a reference may be (``contracts.scalars.Ref``), so nothing longer is looked
# up, nor sent back in the answer.
PathRef = Annotated[str, Path(min_length=1, max_length=512)]


class NamePathConvertor(PathConvertor):
    """``{name:name}``: a path parameter that may hold slashes (an agent's ``Office/Coach``),
    as ``:path`` does, but at least one character. Starlette's ``:path`` matches nothing too,
    so ``/agents/`` reached the route with an empty name and answered 422 for a parameter the
    caller never wrote; with this it is no route at all: 404, as every trailing slash is
    (``create_app``'s ``redirect_slashes=False``)."""

    regex = ".+"


register_url_convertor("name", NamePathConvertor())
# An instant in a query: an RFC 3339 date-time with its offset, as the schema's format says.
# Read laxly, a number would be a Unix timestamp and a bare date midnight somewhere.
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")


def rfc3339(value: object) -> object:
    if not (isinstance(value, str) and _RFC3339.fullmatch(value)):
        raise ValueError("expected an RFC 3339 date-time with its offset: 2026-11-30T08:00:00Z")
    return value


# Within years 1 to 9999 in UTC, as every instant a door takes (``contracts.scalars``).
Instant = Annotated[datetime, BeforeValidator(rfc3339), AfterValidator(within_utc_years)]
# ``?before=`` on lists: the ``next`` of the previous page, a token like a position. Long
# enough for a sealed sort key as long as a dataset id (``agent:`` and a 512-character id).
Before = Annotated[
    str | None,
    Query(min_length=1, max_length=1024, description="Cursor: the `next` of the previous page"),
]
# ``?limit=`` on lists: a page's length; the same bounds on every list.
Limit = Annotated[int, Query(ge=1, le=200, description="At most this many items (1–200)")]
PAGE = 50  # a page's length when ``limit`` is not given


# ``Idempotency-Key``: a retry with the same key is the same command (SPEC C11). An empty key
# is refused rather than read as "no key": the client meant to send one.
IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        min_length=1,
        max_length=200,
        description="The same key and body answer the first result (200); another body 409.",
    ),
]


def command_id(idempotency_key: str | None) -> str:
    """The command's id: from the client's Idempotency-Key, so a retry is the same command."""
    return f"key/{idempotency_key}" if idempotency_key else str(uuid.uuid4())
