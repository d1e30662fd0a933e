"""The store reads an event's JSON with orjson and gets what the library's ``json`` decoder
and its object hook get: the same values, of the same types, in the
same order, or the same error.

Two sides: every event class of the code base, built with values hypothesis makes from its
fields' types and stored by the store's own mapper; and hostile documents (floats, integers
past 64 bits, NaN, lone surrogates, duplicate keys, ``_type_`` objects of every registered
name and of none, broken bytes), compared as they are.
"""

import importlib
import inspect
import json
import pkgutil
import types
import typing
import uuid
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from eventsourcing.domain import DomainEvent
from eventsourcing.persistence import JSONTranscoder
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

import services
from contracts.neighbours import RunCompleted
from services.store.event_store import EventStore
from services.store.fast_event_json import FastJSONTranscoder

AT = datetime(2026, 11, 30, 12, 0, 0, 123456, tzinfo=UTC)
RUN = RunCompleted.model_validate(
    {
        "runId": "run-1",
        "agentId": "agent-1",
        "outcome": "succeeded",
        "inputRef": "urn:in:1",
        "serves": ["task:t-1"],
        "completedAt": AT,
    }
)


def make_store_and_library() -> tuple[EventStore, FastJSONTranscoder, JSONTranscoder]:
    store = EventStore(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    library = JSONTranscoder()
    store.register_transcodings(library)
    fast = store.mapper.transcoder
    assert isinstance(fast, FastJSONTranscoder)
    return store, fast, library


# Built once: neither transcoder keeps anything between calls.
STORE, FAST, LIBRARY = make_store_and_library()
THEIRS = EventStore(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
THEIRS.mapper.transcoder = LIBRARY  # the library's reading, through the same mapper
THEIRS.mapper.keys = STORE.data_keys  # type: ignore[attr-defined]  # personal fields: same keys


def store_and_library() -> tuple[EventStore, FastJSONTranscoder, JSONTranscoder]:
    return STORE, FAST, LIBRARY


def event_classes() -> list[type[DomainEvent]]:
    """Every domain event class declared under ``services`` that carries state."""
    found: dict[str, type[DomainEvent]] = {}
    for module_info in pkgutil.walk_packages(services.__path__, "services."):
        module = importlib.import_module(module_info.name)
        for value in vars(module).values():
            if not inspect.isclass(value):
                continue
            for cls in (value, *(v for v in vars(value).values() if inspect.isclass(v))):
                if issubclass(cls, DomainEvent) and cls.__module__.startswith("services."):
                    found[f"{cls.__module__}:{cls.__qualname__}"] = cls
    return [found[name] for name in sorted(found)]


EVENT_CLASSES = event_classes()

# Text of every kind the encoders can write (a lone surrogate they cannot: both refuse it).
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=30)
INTS = st.integers() | st.integers(min_value=-(2**70), max_value=2**70)
FLOATS = st.floats(allow_nan=True, allow_infinity=True)
TYPED_NAMES = st.sampled_from(["datetime_iso", "uuid_hex", "decimal_str", "RunCompleted"])


def scalars() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.none(),
        st.booleans(),
        INTS,
        FLOATS,
        TEXT,
        st.datetimes(timezones=st.none() | st.just(UTC)),
        st.uuids(),
        st.decimals(allow_nan=False, allow_infinity=False, places=3),
    )


ANY: st.SearchStrategy[Any] = st.recursive(
    scalars(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(TEXT | st.sampled_from(["_type_", "_data_"]), inner, max_size=4)
        # An object of the transcoder's own shape, whatever it holds: it goes to the hook.
        | st.fixed_dictionaries({"_type_": TYPED_NAMES | TEXT, "_data_": inner})
    ),
    max_leaves=12,
)


def strategy_for(hint: Any) -> st.SearchStrategy[Any]:
    """Values of a field's type, as hypothesis may build them (``Any`` is any JSON value the
    library can store, and then some)."""
    origin = typing.get_origin(hint)
    if hint is Any:
        return ANY
    if hint is type(None):
        return st.none()
    if origin in (typing.Union, types.UnionType):
        return st.one_of(*(strategy_for(arg) for arg in typing.get_args(hint)))
    if origin is list:
        return st.lists(strategy_for(typing.get_args(hint)[0]), max_size=4)
    if origin is dict:
        return st.dictionaries(TEXT, strategy_for(typing.get_args(hint)[1]), max_size=4)
    if hint is str:
        return TEXT
    if hint is bool:
        return st.booleans()
    if hint is int:
        return INTS
    if hint is float:
        return FLOATS
    if hint is datetime:
        return st.datetimes(timezones=st.none() | st.just(UTC))
    if hint is uuid.UUID:
        return st.uuids()
    if hint is RunCompleted:
        return st.just(RUN)
    if typing.is_typeddict(hint):
        fields = typing.get_type_hints(hint)
        return st.fixed_dictionaries({name: strategy_for(t) for name, t in fields.items()})
    raise NotImplementedError(f"no strategy for {hint!r}")


def events_of(cls: type[DomainEvent]) -> st.SearchStrategy[DomainEvent]:
    hints = {
        name: hint
        for name, hint in typing.get_type_hints(cls).items()
        if typing.get_origin(hint) is not typing.ClassVar
    }
    fields: dict[str, st.SearchStrategy[Any]] = {
        name: strategy_for(hint)
        for name, hint in hints.items()
        if name not in {"originator_id", "originator_version", "timestamp", "originator_topic"}
    }
    if "originator_topic" in hints:
        fields["originator_topic"] = st.just("services.x:Aggregate")
    return st.builds(
        cls,
        originator_id=st.uuids(),
        originator_version=st.integers(1, 2**31),
        timestamp=st.datetimes(timezones=st.just(UTC)),
        **fields,
    )


def identical(a: Any, b: Any) -> bool:
    """Equal, of the same types all the way down, dict keys in the same order (``==``
    alone takes 1 for True and 1.0, and any order of keys)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(identical(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(identical(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and a != a:
        return bool(b != b)  # NaN
    if isinstance(a, Decimal) and a.is_nan():  # never equal to itself; sNaN refuses to compare
        return str(a) == str(b)  # the same NaN: quiet or signalling, its sign and payload
    if isinstance(a, BaseModel):
        return identical(a.model_dump(), b.model_dump())
    if isinstance(a, datetime):
        return bool(a == b and a.tzinfo == b.tzinfo and a.utcoffset() == b.utcoffset())
    return bool(a == b)


def outcome(decode: Any, data: Any) -> tuple[str, Any]:
    """What decoding gives: the value, or the error's type and message."""
    try:
        return "value", decode(data)
    except Exception as error:
        return "error", (type(error), str(error))


def assert_same(fast: FastJSONTranscoder, library: JSONTranscoder, data: bytes) -> None:
    mine, theirs = outcome(fast.decode, data), outcome(library.decode, data)
    assert mine[0] == theirs[0], (data, mine, theirs)
    if mine[0] == "value":
        assert identical(mine[1], theirs[1]), (data, mine, theirs)
    else:
        assert mine[1] == theirs[1], data


def test_every_kind_of_event_is_found() -> None:
    names = {cls.__qualname__ for cls in EVENT_CLASSES}
    assert {"Feedback.Recorded", "Receipt.Recorded", "HarvestedRun.Harvested"} <= names
    assert len(EVENT_CLASSES) > 40


@pytest.mark.parametrize("cls", EVENT_CLASSES, ids=lambda cls: cls.__qualname__)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_stored_event_reads_back_as_the_library_reads_it(
    cls: type[DomainEvent], data: st.DataObject
) -> None:
    store, fast, library = store_and_library()
    event = data.draw(events_of(cls))
    try:
        stored = store.mapper.to_stored_event(event)
    except (UnicodeEncodeError, ValueError, TypeError):
        return  # not storable (the library refuses it too): nothing to read back
    assert_same(fast, library, stored.state)
    # And the whole event, through the store's mapper, as the library's would read it.
    mine = outcome(lambda s: vars(store.mapper.to_domain_event(s)), stored)
    theirs = outcome(lambda s: vars(THEIRS.mapper.to_domain_event(s)), stored)
    assert mine[0] == theirs[0]
    assert identical(mine[1], theirs[1]) if mine[0] == "value" else mine[1] == theirs[1]


@settings(max_examples=400, deadline=None)
@given(value=ANY)
@example(value=Decimal("NaN"))  # found by a CI run: both read it back as Decimal("NaN")
@example(value=Decimal("-sNaN"))
def test_any_value_the_library_writes_reads_back_alike(value: Any) -> None:
    _, fast, library = store_and_library()
    try:
        data = library.encode(value)
    except (UnicodeEncodeError, ValueError, TypeError):
        return
    assert_same(fast, library, data)


def dumped(value: Any) -> st.SearchStrategy[bytes]:
    """JSON text of a plain value, written in the ways a hostile writer might: with escapes
    or raw UTF-8, with or without spaces."""
    return st.builds(
        lambda ascii_only, indent: json.dumps(value, ensure_ascii=ascii_only, indent=indent).encode(
            "utf-8", "surrogatepass"
        ),
        st.booleans(),
        st.none() | st.just(1),
    )


PLAIN = st.recursive(
    st.none() | st.booleans() | INTS | FLOATS | st.text(max_size=20),  # lone surrogates too
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=6), inner, max_size=4)
        | st.fixed_dictionaries({"_type_": TYPED_NAMES | inner, "_data_": inner})
    ),
    max_leaves=10,
)

HOSTILE = [
    b'{"a":1,"b":2,"a":3}',
    b'{"_type_":"datetime_iso","_data_":"2026-11-30T12:00:00+00:00","_type_":"uuid_hex"}',
    b'{"_type_":"datetime_iso","_data_":"not a time"}',
    b'{"_type_":"nobody","_data_":1}',
    b'{"_type_":["a"],"_data_":1}',
    b'{"_data_":1,"_type_":"decimal_str"}',
    b'{"x":[{"_type_":"nobody","_data_":1},{"_type_":"datetime_iso","_data_":"bad"}]}',
    b'{"x":{"_type_":"nobody","_data_":1},"y":1.5}',
    b'{"y":1.5,"x":{"_type_":"nobody","_data_":1}}',
    b'{"n":18446744073709551616}',
    b'{"n":-9223372036854775809}',
    b'{"n":18446744073709551615}',
    b'{"n":1e400}',
    b'{"n":NaN,"m":-Infinity}',
    b'{"s":"\\ud800"}',
    b'{"s":"\\ud83d\\ude00"}',
    b'{"s":"a\x01b"}',
    b"\xef\xbb\xbf{}",
    b'{"s":"\xff"}',
    b" \n{} \t",
    b"{} x",
    b"[1,2,]",
    b"",
    b"1.0",
    b"-0",
    b'"text"',
    b"[" * 2000 + b"]" * 2000,
]


@pytest.mark.parametrize("data", HOSTILE)
def test_hostile_documents_read_as_the_library_reads_them(data: bytes) -> None:
    _, fast, library = store_and_library()
    assert_same(fast, library, data)


@settings(max_examples=400, deadline=None)
@given(data=PLAIN.flatmap(dumped))
def test_any_json_text_reads_as_the_library_reads_it(data: bytes) -> None:
    _, fast, library = store_and_library()
    assert_same(fast, library, data)


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=40) | st.text(max_size=40).map(lambda s: s.encode("utf-8")))
def test_any_bytes_read_as_the_library_reads_them(data: bytes) -> None:
    _, fast, library = store_and_library()
    assert_same(fast, library, data)


def test_a_decoded_datetime_and_uuid_are_the_transcodings_own() -> None:
    _, fast, _ = store_and_library()
    some = uuid.uuid4()
    state = fast.decode(fast.encode({"at": AT, "id": some, "amount": Decimal("1.50")}))
    assert state == {"at": AT, "id": some, "amount": Decimal("1.50")}
