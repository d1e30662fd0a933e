"""Personal data in events, sealed on the way into the log and opened on the way out.

An event class declares which of its fields are personal with one class attribute,
``personal = Personal(...)`` (decisions D42): the text a person wrote and the fields that
name them. The store's mapper (``SealingMapper``, the one place every event is written and
read through) seals those fields under the person's data key (``services.store.data_keys``)
and opens them when the event is read (the log's readers: where they read the field,
``services.store.lazy_opening``), so aggregates, handlers, read models and the relay see
plain values. Once the key is destroyed, a sealed field reads as erased (``ERASED`` for text,
``erased:<key>`` for an identity, so that distinct people stay distinct in counts) and the
event still decodes. A box whose key is still there but which fails to open (its
authentication tag refuses it: a character changed, a box moved from another event) is no
erasure but an incident (decisions D142): ``BrokenSeal`` is raised, so the reader that meets
it parks the event with that reason and ``/readyz`` says so, and nothing reads it as erased.

A sealed field is stored as ``{"sealed": "<key id>", "box": "<base64 nonce + AES-GCM>"}``
(with a list's length, or the shape of a value that is no text, so that an erased value keeps
its type and a list its count).
The nonce is derived from the key and the field's place (aggregate, version, field): the same
event is always stored as the same bytes (a repeated command, the bus's fast twin of an
aggregate's ``_create``), and a place holds one value under one key. The place is also the
associated data, so a box moved to another event does not open.
"""

import base64
import binascii
import hashlib
import hmac
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property, partial
from typing import Any
from uuid import UUID

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from eventsourcing.domain import DomainEventProtocol
from eventsourcing.persistence import (
    Mapper,
    MapperDeserialisationError,
    StoredEvent,
    Transcoder,
)
from eventsourcing.utils import get_topic, resolve_topic

from services.store.data_keys import DataKey, DataKeys

log = logging.getLogger(__name__)

ERASED = "[erased]"
SEALED = "sealed"
BOX = "box"
LENGTH = "n"  # a sealed list's length
SHAPE = "shape"  # what a sealed value that is no text or list erases to
ITEMS = "items"  # a sealed list of records: each record's keys, so that it erases to records
EACH = "[]"  # ``threads[].text``: the key ``text`` of each record of the list ``threads``
_NONCE = 12
# A box's plain text: a text value as its UTF-8 after this byte (decisions D222); any other
# value, and every box sealed before, as the JSON ``{"v": value}``, which never begins so.
TEXT = b"\x00"
# Ciphers kept by the mapper, one per key it opened with (decisions D222): past this many the
# cache is emptied and refilled by use; an erasure empties it too (``DataKeys.generation``).
OPENERS_MAX = 10_000


@dataclass(frozen=True)
class Personal:
    """What of an event is personal, and whose key seals it.

    ``text``: fields a person wrote (``"facts.expected"`` names a key inside a dict field,
    ``"threads[].text"`` that key of each record of a list field).
    ``identity``: fields that name the person. ``person``: the field holding the person (their
    key, in the event's tenant); without it, the key the aggregate named by ``of`` (a field
    holding an aggregate id; by default this event's own aggregate) was sealed under.
    ``binds``: later events of this aggregate, which name no person, use this event's key
    (a report's hand-over uses its draft's; a case lifted from a report, and its patches, the
    report's).
    ``dated``: the key is the person's key of the event's month, which a tenant's retention
    destroys (decisions D45); otherwise their key kept until they are erased.
    ``names``: fields that name someone other than the event's person (a reviewer, a
    maintainer, an addressee), each with the role an export shows in its place (decisions
    D130, D136): each is sealed under the key of the person it names (a list, each item under
    its own), so that erasing that person erases their id here too. Needs ``tenant_id`` on
    the event; an event without one (written before it had one) keeps the names plain.
    ``naming``: fields sealed under the person's key when their value holds the person's id
    (a feedback's subject ref that begins with its giver's id), read as an identity; a value
    that does not hold it (a run's id, made by the runtime) names nobody and stays plain, so
    counts and joins by it stay (decisions D137)."""

    text: tuple[str, ...] = ()
    identity: tuple[str, ...] = ()
    person: str | None = None
    of: str | None = None
    binds: bool = False
    dated: bool = False
    names: Mapping[str, str] = field(default_factory=dict)
    naming: tuple[str, ...] = ()

    @property
    def fields(self) -> tuple[str, ...]:
        return self.text + self.identity

    @cached_property  # asked for every event read (decisions D222)
    def every_field(self) -> tuple[str, ...]:
        """Every field declared personal, whoever's key seals it."""
        return self.fields + tuple(self.names) + self.naming

    def is_identity(self, path: str) -> bool:
        """Read as an identity: erased to ``erased:<key>``, distinct people stay distinct."""
        return path in self.identity or path in self.names or path in self.naming


class BrokenSeal(Exception):
    """A sealed field whose key exists but whose box does not open: tampered with or
    corrupted, never erased (decisions D142). The event cannot be read; its reader parks it
    with this reason (``services.followers.parking``), which ``/readyz`` counts apart."""


def personal_of(cls: type) -> Personal | None:
    declared = getattr(cls, "personal", None)
    return declared if isinstance(declared, Personal) else None


def month_of(at: datetime) -> str:
    return f"{at.year:04d}-{at.month:02d}"


def is_sealed(value: Any) -> bool:
    return type(value) is dict and SEALED in value and BOX in value


class SealingMapper(Mapper[UUID]):
    """The library's mapper, sealing and opening the declared personal fields."""

    def __init__(self, transcoder: Transcoder, keys: DataKeys) -> None:
        super().__init__(transcoder)
        self.keys = keys
        self._ciphers: dict[UUID, AESGCM] = {}
        # A stored key id's text → its id and cipher, or None once the key is destroyed:
        # valid for one ``keys.generation`` (decisions D221, D222).
        self._openers: dict[str, tuple[UUID, AESGCM] | None] = {}
        self._generation = keys.generation
        # Boxes decrypted so far: how a test tells a reader that never reads the words from
        # one that does (decisions D290).
        self.opened = 0

    def to_stored_events(self, events: Iterable[DomainEventProtocol[UUID]]) -> list[StoredEvent]:
        """Every event as ``to_stored_event`` stores it, the keys of their people not yet
        made made first, in one commit (decisions D220)."""
        events = list(events)
        self.keys.make(owner for event in events for owner in self._owners(event))
        return [self.to_stored_event(event) for event in events]

    @staticmethod
    def _owners(event: Any) -> Iterable[tuple[str, str, str]]:
        """The keys (tenant, person, scope) sealing ``event`` will ask for, where they can be
        told from its fields alone: the person's, and those of the people a field names. Others
        (a key bound to an aggregate) are asked for as before, one at a time."""
        declared = personal_of(type(event))
        if declared is None:
            return
        state = vars(event)
        tenant = state.get("tenant_id")
        if not isinstance(tenant, str):
            return
        if declared.person is not None and (declared.fields or declared.naming):
            person = state.get(declared.person)
            if person is not None:
                yield tenant, str(person), month_of(state["timestamp"]) if declared.dated else ""
        for path in declared.names:
            value = state.get(path)
            for name in value if type(value) is list else [value]:
                if type(name) is str and name:
                    yield tenant, name, ""

    # Writing ---------------------------------------------------------------------------

    def to_stored_event(self, domain_event: DomainEventProtocol[UUID]) -> StoredEvent:
        declared = personal_of(type(domain_event))
        if declared is None:
            return super().to_stored_event(domain_event)
        # The library's own steps (no compressor or cipher: ``open_store`` refuses them), on
        # the state with its personal fields sealed.
        state = self._sealed_state(domain_event, declared)
        originator_id = state.pop("originator_id")
        originator_version = state.pop("originator_version")
        class_version = getattr(type(domain_event), "class_version", 1)
        if class_version > 1:
            state["class_version"] = class_version
        return StoredEvent(
            originator_id=originator_id,
            originator_version=originator_version,
            topic=get_topic(type(domain_event)),
            state=self.transcoder.encode(state),
        )

    def _key_of(self, state: dict[str, Any], declared: Personal) -> DataKey | None:
        aggregate = state["originator_id"]
        if declared.person is not None:
            person = state[declared.person]
            if person is None:
                return None
            scope = month_of(state["timestamp"]) if declared.dated else ""
            key = self.keys.key_for(state["tenant_id"], str(person), scope)
            if declared.binds:
                self.keys.bind(aggregate, key.key_id)
            return key
        of = aggregate if declared.of is None else _as_uuid(state.get(declared.of))
        bound = None if of is None else self.keys.bound_key(of)
        if bound is not None and declared.binds and of != aggregate:
            self.keys.bind(aggregate, bound.key_id)
        return bound

    def _sealed_state(self, event: Any, declared: Personal) -> dict[str, Any]:
        state = dict(vars(event))
        place = (state["originator_id"], state["originator_version"])
        # Nobody's key: an aggregate from before sealing, or one erased.
        key = self._key_of(state, declared) if declared.fields or declared.naming else None
        if key is not None:
            person = state.get(declared.person) if declared.person is not None else None
            for path in declared.fields:
                self._replace(state, path, partial(self._seal, key, place))
            for path in declared.naming:
                value = state.get(path)
                if type(person) is str and person and type(value) is str and person in value:
                    state[path] = self._seal(key, place, path, value)  # D137
        tenant = state.get("tenant_id")
        if isinstance(tenant, str):
            for path in declared.names:
                self._replace(state, path, partial(self._seal_names, tenant, place))
        return state

    @staticmethod
    def _replace(state: dict[str, Any], path: str, seal: Callable[[str, Any], Any]) -> None:
        """``seal(place's path, value)`` in place of the value at ``path``: a field, a key
        of a dict field (``facts.thread``), or a key of each record of a list (``threads[].text``,
        each item at a place of its own)."""
        field, _, inner = path.partition(".")
        if field.endswith(EACH):
            name = field.removesuffix(EACH)
            items = state.get(name)
            if type(items) is list:
                state[name] = [
                    {**item, inner: seal(f"{name}[{index}].{inner}", item[inner])}
                    if type(item) is dict and item.get(inner) is not None
                    else item
                    for index, item in enumerate(items)
                ]
            return
        value = state.get(field)
        if inner:
            if type(value) is dict and value.get(inner) is not None:
                state[field] = {**value, inner: seal(path, value[inner])}
        elif value is not None:
            state[field] = seal(path, value)

    def _seal_names(self, tenant: str, place: tuple[UUID, int], path: str, value: Any) -> Any:
        """A name under the named person's own key; a list's names each under their own."""
        if type(value) is list:
            return [
                self._seal_names(tenant, place, f"{path}[{index}]", item)
                for index, item in enumerate(value)
            ]
        if type(value) is not str or not value:
            return value  # no name: nobody's key
        return self._seal(self.keys.key_for(tenant, value, ""), place, path, value)

    def _seal(self, key: DataKey, place: tuple[UUID, int], path: str, value: Any) -> Any:
        plain = _plain_text(value) if type(value) is str else None
        if plain is None:
            plain = self.transcoder.encode({"v": value})
        at = _place(place, path)
        nonce = hmac.new(key.key, at, hashlib.sha256).digest()[:_NONCE]
        box = self._cipher(key.key_id, key.key).encrypt(nonce, plain, at)
        sealed: dict[str, Any] = {
            SEALED: str(key.key_id),
            BOX: base64.b64encode(nonce + box).decode(),
        }
        if type(value) is list:
            sealed[LENGTH] = len(value)  # an erased list keeps its length: counts stay
            if value and all(type(item) is dict for item in value):
                sealed[ITEMS] = [sorted(item) for item in value]  # records erase to records
        elif type(value) is not str:
            sealed[SHAPE] = "dict" if type(value) is dict else "other"
        return sealed

    # Reading ---------------------------------------------------------------------------

    def to_domain_event(self, stored_event: StoredEvent) -> DomainEventProtocol[UUID]:
        cls = resolve_topic(stored_event.topic)
        declared = personal_of(cls)
        if declared is None:
            return super().to_domain_event(stored_event)
        # The library's steps, with the personal fields opened before any upcaster reads them.
        state = self.decoded_state(stored_event)
        self.open_fields(state, place_of(stored_event), declared, declared.every_field)
        state["originator_id"] = stored_event.originator_id
        state["originator_version"] = stored_event.originator_version
        class_version = getattr(cls, "class_version", 1)
        from_version = state.pop("class_version", 1)
        while from_version < class_version:
            getattr(cls, f"upcast_v{from_version}_v{from_version + 1}")(state)
            from_version += 1
        domain_event = object.__new__(cls)
        object.__setattr__(domain_event, "__dict__", state)
        return domain_event  # type: ignore[no-any-return]

    def decoded_state(self, stored_event: StoredEvent) -> dict[str, Any]:
        """The stored JSON read, nothing opened yet; failing as the library's mapper does."""
        try:
            state: dict[str, Any] = self.transcoder.decode(stored_event.state)
        except Exception as error:
            raise MapperDeserialisationError(
                f"Failed to deserialise state of stored event with topic "
                f"'{stored_event.topic}', originator_id '{stored_event.originator_id}' and "
                f"originator_version {stored_event.originator_version}: {error}"
            ) from error
        return state

    def open_fields(
        self,
        state: dict[str, Any],
        place: tuple[UUID, int],
        declared: Personal,
        paths: Iterable[str],
    ) -> None:
        """The sealed values at ``paths`` of ``state`` opened in place (``BrokenSeal`` for a
        box that fails authentication, the erased marker for one whose key is destroyed)."""
        for path in paths:
            field, _, inner = path.partition(".")
            value: Any = state.get(field.removesuffix(EACH))
            identity = declared.is_identity(path)
            if field.endswith(EACH) and type(value) is list:
                name = field.removesuffix(EACH)
                for index, item in enumerate(value):
                    if type(item) is dict and inner in item:
                        at = f"{name}[{index}].{inner}"
                        item[inner] = self.opened_value(place, at, item[inner], identity)
            elif inner and type(value) is dict and inner in value:
                value[inner] = self.opened_value(place, path, value[inner], identity)
            elif field in state:
                state[field] = self.opened_value(place, path, value, identity)

    def opened_value(self, place: tuple[UUID, int], path: str, value: Any, identity: bool) -> Any:
        """A field as stored, opened: sealed whole, a list of names sealed each, or plain (an
        event written before the field was sealed is read as it was stored, decisions D131)."""
        if is_sealed(value):
            return self._open(place, path, value, identity)
        if type(value) is list and any(is_sealed(item) for item in value):
            return [
                self._open(place, f"{path}[{index}]", item, True) if is_sealed(item) else item
                for index, item in enumerate(value)
            ]
        return value

    def _open(
        self, place: tuple[UUID, int], path: str, sealed: dict[str, Any], identity: bool
    ) -> Any:
        opener = self._opener(sealed[SEALED])
        if opener is not None:
            key_id, cipher = opener
            try:
                raw = binascii.a2b_base64(sealed[BOX], strict_mode=True)
                plain = cipher.decrypt(raw[:_NONCE], raw[_NONCE:], _place(place, path))
                self.opened += 1
            except (InvalidTag, ValueError, TypeError):  # not base64 (binascii.Error), not text
                # The key is there, so this is no erasure: the box was changed, or is another
                # place's. Neither its words nor "[erased]" is read (decisions D142).
                raise broken_seal(place, path, key_id) from None
            if plain[:1] == TEXT:
                return plain[1:].decode()
            return self.transcoder.decode(plain)["v"]
        key_id = UUID(sealed[SEALED])
        if identity:
            return f"erased:{key_id.hex[:12]}"
        if ITEMS in sealed:
            return [dict.fromkeys(keys, ERASED) for keys in sealed[ITEMS]]
        if LENGTH in sealed:
            return [ERASED] * int(sealed[LENGTH])
        return {"dict": {}, "other": None}.get(sealed.get(SHAPE, ""), ERASED)

    def _opener(self, stored_key_id: str) -> tuple[UUID, AESGCM] | None:
        """The key a box names, with its cipher; None once it is destroyed. Cached by the id's
        text until this process forgets any key (decisions D221, D222)."""
        generation = self.keys.current_generation()
        if generation != self._generation or len(self._openers) >= OPENERS_MAX:
            self._openers.clear()
            self._ciphers.clear()
            self._generation = generation
        if stored_key_id in self._openers:
            return self._openers[stored_key_id]
        key_id = UUID(stored_key_id)
        key = self.keys.key(key_id)
        opener = None if key is None else (key_id, self._cipher(key_id, key))
        self._openers[stored_key_id] = opener
        return opener

    def _cipher(self, key_id: UUID, key: bytes) -> AESGCM:
        cipher = self._ciphers.get(key_id)
        if cipher is None:
            if len(self._ciphers) >= OPENERS_MAX:
                self._ciphers.clear()
            cipher = self._ciphers[key_id] = AESGCM(key)
        return cipher


def broken_seal(place: tuple[UUID, int], path: str, key_id: UUID) -> BrokenSeal:
    """The incident, logged where it is met: which event, which field, under which key."""
    where = f"aggregate {place[0]} version {place[1]}, field {path!r}, data key {key_id}"
    log.error("a sealed box fails authentication (tampered or corrupted): %s", where)
    return BrokenSeal(f"the sealed box at {where} fails authentication: tampered or corrupted")


def opened_key(value: Any) -> UUID | None:
    """The key a stored field was sealed under, or None if it is not sealed."""
    return UUID(value[SEALED]) if is_sealed(value) else None


def _plain_text(value: str) -> bytes | None:
    """A text's plain form in a box, or None for one UTF-8 cannot hold (a lone surrogate:
    the JSON form escapes it)."""
    try:
        return TEXT + value.encode()
    except UnicodeEncodeError:
        return None


def stored_events(mapper: Mapper[UUID], events: list[Any]) -> list[StoredEvent]:
    """The events as ``mapper`` stores them: a sealing mapper makes the keys they need in
    one commit first (decisions D220); any other maps them one by one."""
    if isinstance(mapper, SealingMapper):
        return mapper.to_stored_events(events)
    return [mapper.to_stored_event(event) for event in events]


def place_of(stored_event: StoredEvent) -> tuple[UUID, int]:
    """Where a stored event's boxes were sealed: their nonce's and associated data's place."""
    return _as_uuid(stored_event.originator_id) or UUID(int=0), stored_event.originator_version


def _place(place: tuple[UUID, int], path: str) -> bytes:
    return place[0].bytes + place[1].to_bytes(8, "big", signed=True) + path.encode()


def _as_uuid(value: Any) -> UUID | None:
    try:
        return value if isinstance(value, UUID) else UUID(str(value))
    except ValueError:
        return None
