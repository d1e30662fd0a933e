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

What is personal is declared in ``services.store.sealing_personal`` (the contexts import it
from here); a sealed field is stored as a box (``services.store.sealing_boxes``: the key's id,
the nonce and the AES-GCM ciphertext, derived from the field's place so that the same event is
always stored as the same bytes and a box moved to another event does not open).
"""

import logging
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any
from uuid import UUID

from cryptography.exceptions import InvalidTag
from eventsourcing.domain import DomainEventProtocol
from eventsourcing.persistence import (
    Mapper,
    MapperDeserialisationError,
    StoredEvent,
    Transcoder,
)
from eventsourcing.utils import get_topic, resolve_topic

from services.store.data_keys import DataKey, DataKeys
from services.store.sealing_boxes import (
    BOX,
    ITEMS,
    LENGTH,
    SEALED,
    SHAPE,
    Sealer,
    opened_text,
    place,
)

# What the contexts declare and read with, imported from here (decisions D42, D302).
from services.store.sealing_personal import EACH as EACH
from services.store.sealing_personal import Personal as Personal
from services.store.sealing_personal import month_of as month_of
from services.store.sealing_personal import owners_of, replace_at
from services.store.sealing_personal import personal_of as personal_of

log = logging.getLogger(__name__)

ERASED = "[erased]"
# Keys kept by the mapper as ``Sealer``s, one per key it sealed or opened with (decisions
# D222, D301): past this many the cache is emptied and refilled by use; an erasure empties it
# too (``DataKeys.generation``).
OPENERS_MAX = 10_000


KeyFor = Callable[[str, str, str], DataKey]  # (tenant, person, scope) → their key


class NotHeld(Exception):
    """A key this process does not hold yet: the batch's people's keys are made first."""


class BrokenSeal(Exception):
    """A sealed field whose key exists but whose box does not open: tampered with or
    corrupted, never erased (decisions D142). The event cannot be read; its reader parks it
    with this reason (``services.followers.parking``), which ``/readyz`` counts apart."""


def is_sealed(value: Any) -> bool:
    return type(value) is dict and SEALED in value and BOX in value


class SealingMapper(Mapper[UUID]):
    """The library's mapper, sealing and opening the declared personal fields."""

    def __init__(self, transcoder: Transcoder, keys: DataKeys) -> None:
        super().__init__(transcoder)
        self.keys = keys
        # A key's id → the key as boxes are sealed and opened with it (decisions D301).
        self._sealers: dict[UUID, Sealer] = {}
        # A stored key id's text → the key, or None once it is destroyed: valid for one
        # ``keys.generation`` (decisions D221, D222).
        self._openers: dict[str, Sealer | None] = {}
        self._generation = keys.generation
        # Boxes decrypted so far: how a test tells a reader that never reads the words from
        # one that does (decisions D290).
        self.opened = 0

    def to_stored_events(self, events: Iterable[DomainEventProtocol[UUID]]) -> list[StoredEvent]:
        """Every event as ``to_stored_event`` stores it, the keys of their people not yet
        made made first, in one commit (decisions D220). Sealed first with the keys this
        process holds (a person's every command after their first, decisions D301); only a
        batch that needs a key not held looks for its people's keys and makes them."""
        events = list(events)
        declared = [personal_of(type(event)) for event in events]
        pairs = list(zip(events, declared, strict=True))
        try:
            return [self._stored(event, personal, self._held) for event, personal in pairs]
        except NotHeld:
            pass
        owners = [
            owner for event, personal in pairs if personal is not None
            for owner in owners_of(event, personal)
        ]  # fmt: skip
        if owners:
            self.keys.make(owners)
        return [self._stored(event, personal, self.keys.key_for) for event, personal in pairs]

    # Writing ---------------------------------------------------------------------------

    def to_stored_event(self, domain_event: DomainEventProtocol[UUID]) -> StoredEvent:
        return self._stored(domain_event, personal_of(type(domain_event)), self.keys.key_for)

    def _held(self, tenant_id: str, person: str, scope: str) -> DataKey:
        key = self.keys.held_key(tenant_id, person, scope)
        if key is None:
            raise NotHeld
        return key

    def _stored(
        self, event: DomainEventProtocol[UUID], declared: Personal | None, key_for: KeyFor
    ) -> StoredEvent:
        if declared is None:
            return super().to_stored_event(event)
        # The library's own steps (no compressor or cipher: ``open_store`` refuses them), on
        # the state with its personal fields sealed.
        state = self._sealed_state(event, declared, key_for)
        originator_id = state.pop("originator_id")
        originator_version = state.pop("originator_version")
        class_version = getattr(type(event), "class_version", 1)
        if class_version > 1:
            state["class_version"] = class_version
        return StoredEvent(
            originator_id=originator_id,
            originator_version=originator_version,
            topic=get_topic(type(event)),
            state=self.transcoder.encode(state),
        )

    def _key_of(self, state: dict[str, Any], declared: Personal, key_for: KeyFor) -> DataKey | None:
        aggregate = state["originator_id"]
        if declared.person is not None:
            person = state[declared.person]
            if person is None:
                return None
            scope = month_of(state["timestamp"]) if declared.dated else ""
            key = key_for(state["tenant_id"], str(person), scope)
            if declared.binds:
                self.keys.bind(aggregate, key.key_id)
            return key
        of = aggregate if declared.of is None else _as_uuid(state.get(declared.of))
        bound = None if of is None else self.keys.bound_key(of)
        if bound is not None and declared.binds and of != aggregate:
            self.keys.bind(aggregate, bound.key_id)
        return bound

    def _sealed_state(self, event: Any, declared: Personal, key_for: KeyFor) -> dict[str, Any]:
        state = dict(vars(event))
        at = place(state["originator_id"], state["originator_version"])
        # Nobody's key: an aggregate from before sealing, or one erased.
        key = self._key_of(state, declared, key_for) if declared.seals else None
        if key is not None:
            sealer = self._sealer(key.key_id, key.key)
            encode = self.transcoder.encode
            person = state.get(declared.person) if declared.person is not None else None
            for path in declared.whole_fields:  # no walk for a field sealed whole (D301)
                value = state.get(path)
                if value is not None:
                    state[path] = sealer.sealed(at + path.encode(), value, encode)
            for path in declared.inner_fields:
                replace_at(state, path, partial(self._seal, sealer, at))
            for path in declared.naming:
                value = state.get(path)
                if type(person) is str and person and type(value) is str and person in value:
                    state[path] = self._seal(sealer, at, path, value)  # D137
        if declared.names:
            tenant = state.get("tenant_id")
            if isinstance(tenant, str):
                for path in declared.names:
                    replace_at(state, path, partial(self._seal_names, key_for, tenant, at))
        return state

    def _seal_names(self, key_for: KeyFor, tenant: str, at: bytes, path: str, value: Any) -> Any:
        """A name under the named person's own key; a list's names each under their own."""
        if type(value) is list:
            return [
                self._seal_names(key_for, tenant, at, f"{path}[{index}]", item)
                for index, item in enumerate(value)
            ]
        if type(value) is not str or not value:
            return value  # no name: nobody's key
        key = key_for(tenant, value, "")
        return self._seal(self._sealer(key.key_id, key.key), at, path, value)

    def _seal(self, sealer: Sealer, at: bytes, path: str, value: Any) -> Any:
        return sealer.sealed(at + path.encode(), value, self.transcoder.encode)

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
            try:
                plain = opener.opened(sealed[BOX], _at(place, path))
                self.opened += 1
            except (InvalidTag, ValueError, TypeError):  # not base64 (binascii.Error), not text
                # The key is there, so this is no erasure: the box was changed, or is another
                # place's. Neither its words nor "[erased]" is read (decisions D142).
                raise broken_seal(place, path, opener.key_id) from None
            return opened_text(plain, self.transcoder.decode)
        key_id = UUID(sealed[SEALED])
        if identity:
            return f"erased:{key_id.hex[:12]}"
        if ITEMS in sealed:
            return [dict.fromkeys(keys, ERASED) for keys in sealed[ITEMS]]
        if LENGTH in sealed:
            return [ERASED] * int(sealed[LENGTH])
        return {"dict": {}, "other": None}.get(sealed.get(SHAPE, ""), ERASED)

    def _opener(self, stored_key_id: str) -> Sealer | None:
        """The key a box names; None once it is destroyed. Cached by the id's text until this
        process forgets any key (decisions D221, D222)."""
        generation = self.keys.current_generation()
        if generation != self._generation or len(self._openers) >= OPENERS_MAX:
            self._openers.clear()
            self._sealers.clear()
            self._generation = generation
        if stored_key_id in self._openers:
            return self._openers[stored_key_id]
        key_id = UUID(stored_key_id)
        key = self.keys.key(key_id)
        opener = None if key is None else self._sealer(key_id, key)
        self._openers[stored_key_id] = opener
        return opener

    def _sealer(self, key_id: UUID, key: bytes) -> Sealer:
        """The key as boxes are sealed and opened with it, made once (decisions D301)."""
        sealer = self._sealers.get(key_id)
        if sealer is None:
            if len(self._sealers) >= OPENERS_MAX:
                self._sealers.clear()
            sealer = self._sealers[key_id] = Sealer(key_id, key)
        return sealer


def broken_seal(place: tuple[UUID, int], path: str, key_id: UUID) -> BrokenSeal:
    """The incident, logged where it is met: which event, which field, under which key."""
    where = f"aggregate {place[0]} version {place[1]}, field {path!r}, data key {key_id}"
    log.error("a sealed box fails authentication (tampered or corrupted): %s", where)
    return BrokenSeal(f"the sealed box at {where} fails authentication: tampered or corrupted")


def opened_key(value: Any) -> UUID | None:
    """The key a stored field was sealed under, or None if it is not sealed."""
    return UUID(value[SEALED]) if is_sealed(value) else None


def stored_events(mapper: Mapper[UUID], events: list[Any]) -> list[StoredEvent]:
    """The events as ``mapper`` stores them: a sealing mapper makes the keys they need in
    one commit first (decisions D220); any other maps them one by one."""
    if isinstance(mapper, SealingMapper):
        return mapper.to_stored_events(events)
    return [mapper.to_stored_event(event) for event in events]


def place_of(stored_event: StoredEvent) -> tuple[UUID, int]:
    """Where a stored event's boxes were sealed: their nonce's and associated data's place."""
    return _as_uuid(stored_event.originator_id) or UUID(int=0), stored_event.originator_version


def _at(where: tuple[UUID, int], path: str) -> bytes:
    """A field's place: its box's nonce's and associated data's."""
    return place(*where) + path.encode()


def _as_uuid(value: Any) -> UUID | None:
    try:
        return value if isinstance(value, UUID) else UUID(str(value))
    except ValueError:
        return None
