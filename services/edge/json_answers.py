"""JSON answers written by orjson, FastAPI's own JSON answer as the reference.

A route that answers a plain dict (text, integers, booleans, null, UUIDs, lists and dicts of
them) writes it with ``answer_json`` instead of letting FastAPI validate it against the
route's response model and encode it (``plain_answer_json``): the bytes are the same, written
in a fraction of the time, which counts on the command routes. A float may be spelt
otherwise (orjson writes ``1e16`` where the standard encoder writes ``1e+16``): the same
number. tests/unit/test_json_answers.py holds the two to that.
"""

from typing import Any

import orjson
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse


def answer_json(content: Any) -> bytes:
    """The body of a JSON answer of ``content``."""
    return orjson.dumps(content)


def plain_answer_json(content: Any) -> bytes:
    """The reference: the body FastAPI's ``JSONResponse`` writes for ``content``."""
    return bytes(JSONResponse(jsonable_encoder(content)).body)
