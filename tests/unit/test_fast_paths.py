"""The store's fenced fast twins, each held to its plain path: ``frozen_from_fields`` to the
class's own constructor, ``uuid5_in`` to ``uuid.uuid5``, ``hmac_sha256_under`` to ``hmac.new``."""

import hashlib
import hmac
from dataclasses import fields
from typing import Any
from uuid import UUID, uuid5

import pytest
from eventsourcing.persistence import Notification
from hypothesis import given, settings
from hypothesis import strategies as st

from services.bus.command_bus import RECEIPT_TOPIC, Receipt
from services.store.fast_frozen import frozen_from_fields
from services.store.fast_hmac import hmac_sha256_under
from services.store.fast_uuid5 import uuid5_in


def drawn(cls: type[Any], **values: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """The class and a dict of its fields, in the order they are named here."""
    names = list(values)
    return st.tuples(*values.values()).map(
        lambda drawn: (cls, dict(zip(names, drawn, strict=True)))
    )


NOTIFICATIONS = drawn(
    Notification,
    originator_id=st.uuids(),
    originator_version=st.integers(min_value=1, max_value=2**63 - 1),
    topic=st.text(max_size=40),
    state=st.binary(max_size=64),
    id=st.integers(min_value=1, max_value=2**63 - 1),
)
RECEIPTS = drawn(
    Receipt.Recorded,
    originator_id=st.uuids(),
    originator_version=st.just(1),
    timestamp=st.datetimes(timezones=st.timezones()),
    originator_topic=st.just(RECEIPT_TOPIC),
    identity=st.text(max_size=40),
    command=st.text(max_size=20),
    digest=st.none() | st.text(max_size=64),
)


@settings(max_examples=300)
@given(NOTIFICATIONS | RECEIPTS)
def test_a_frozen_instance_from_its_fields_is_what_its_constructor_makes(
    example: tuple[type[Any], dict[str, Any]],
) -> None:
    """Equal, of the same class, with the same fields in the same order (a stored event writes
    them in its ``__dict__``'s order), each field named in the class's order."""
    cls, values = example
    assert list(values) == [f.name for f in fields(cls)]
    built = cls(**values)
    fast = frozen_from_fields(cls, dict(values))
    assert type(fast) is type(built)
    assert fast == built
    assert list(vars(fast).items()) == list(vars(built).items())


@settings(max_examples=300)
@given(st.uuids(), st.text())
def test_a_name_based_id_is_the_uuid5_of_its_name(namespace: UUID, name: str) -> None:
    """Any name in any namespace: the very id ``uuid5`` derives, or the same refusal."""
    try:
        expected = uuid5(namespace, name)
    except UnicodeEncodeError:  # a lone surrogate: both refuse it
        with pytest.raises(UnicodeEncodeError):
            uuid5_in(namespace)(name)
        return
    assert uuid5_in(namespace)(name) == expected


@settings(max_examples=300)
@given(st.binary(max_size=100), st.lists(st.binary(max_size=200), min_size=1, max_size=3))
def test_an_hmac_under_a_key_is_the_one_hmac_new_makes(key: bytes, messages: list[bytes]) -> None:
    """Any key (shorter, as long as or longer than a block) and messages, each in turn with the
    same function: the digest ``hmac.new`` makes."""
    digest = hmac_sha256_under(key)
    for message in messages:
        assert digest(message) == hmac.new(key, message, hashlib.sha256).digest()
