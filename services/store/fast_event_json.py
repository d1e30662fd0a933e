"""An event's JSON written and read with orjson: the fast twin of the library's
``JSONTranscoder``, which the event store constructs (``EventStore.construct_transcoder``).

Every command writes its events' JSON and every reader of the log and every load of an
aggregate reads it back, so the transcoder sits on every hot path. The library's ``json``
encoder calls its ``default`` for each datetime, and its decoder its object hook while it
parses; orjson does the parsing and writing in compiled code.

Writing: only values ``plain_json`` admits go through orjson, where both write the same bytes;
anything else is the library's. Reading: orjson's, with the library's own object hook applied
to every object afterwards, innermost first and in document order, as ``json`` applies it
while it parses: the same ``_type_``/``_data_`` transcodings, the same errors. Where the two
parsers may differ, the library's decodes: whatever orjson refuses (NaN, lone surrogates,
numbers past a double …) and any document holding a float (orjson reads an integer past 64
bits as one, and a float's last digit is left to ``float()`` alone).

The plain path is the library's ``JSONTranscoder``; ``tests/unit/test_store_transcoder.py``
and ``tests/unit/test_store_decode.py`` hold the two to the same bytes and the same values.
"""

from datetime import datetime
from typing import Any

import orjson
from eventsourcing.persistence import JSONTranscoder

INT64 = range(-(2**63), 2**63)  # orjson writes the ints of this range as json does
SCALARS = frozenset({str, bool, type(None), datetime})  # written alike by both, exact types


def plain_json(value: Any) -> bool:
    """Whether orjson writes this value byte for byte as the library's ``json`` encoder does:
    strings, bools, None, 64-bit ints, aware or naive datetimes (by the transcoding, as the
    library does), and lists and string-keyed dicts of those. Not floats (the two spell some
    differently), tuples, UUIDs, enums or subclasses (orjson has ways of its own for them)."""
    kind = type(value)
    if kind in SCALARS:
        return True
    if kind is int:
        return value in INT64
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str or (type(item) not in SCALARS and not plain_json(item)):
                return False
        return True
    if kind is list:
        return all(type(item) in SCALARS or plain_json(item) for item in value)
    return False


class FastJSONTranscoder(JSONTranscoder):
    """The library's JSON transcoder, writing and reading through orjson where both agree."""

    def encode(self, obj: Any) -> bytes:
        if plain_json(obj):
            try:
                return orjson.dumps(
                    obj, default=self._encode_obj, option=orjson.OPT_PASSTHROUGH_DATETIME
                )
            except orjson.JSONEncodeError:
                pass  # a lone surrogate, say: the library's encoder says what is wrong
        return super().encode(obj)

    def decode(self, data: bytes) -> Any:
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError:
            return super().decode(data)  # refused: the library's reading, or its error
        kind = type(value)
        if kind is dict or kind is list:
            try:
                return self._hooked(value)
            except _HasFloat:
                return super().decode(data)
        if kind is float:
            return super().decode(data)
        return value

    def _hooked(self, value: Any) -> Any:
        """``value`` (a dict or list orjson read) with the library's hook applied to every
        object in it, innermost first, as ``json`` applies it while parsing."""
        is_dict = type(value) is dict
        # Each item put back in its own place: a dict keeps its size, a list its length.
        for place, item in value.items() if is_dict else enumerate(value):
            kind = type(item)
            if kind is dict or kind is list:
                value[place] = self._hooked(item)
            elif kind is float:
                raise _HasFloat
        # The hook returns an object of any other size as it is: spare it the call.
        return self._decode_obj(value) if is_dict and len(value) == 2 else value


class _HasFloat(Exception):
    """A float in what orjson read: the library's decoder reads the document instead."""
