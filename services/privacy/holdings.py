"""Everything the service holds about a person: the events sealed under their keys, decoded,
and the artifacts those events reference (an access request; also what an erasure deletes
beside the keys).

Found by reading the whole log once: an event is the person's if its stored state names one
of their data keys (a key id is random, so it names nothing else). Others named in those
events are shown by their role, not their id (decisions D136). An event of theirs holding a
sealed box that fails authentication is kept apart, unread (decisions D142, D145): an
erasure still goes on, an export refuses.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import orjson
from psycopg.rows import tuple_row

from contracts.artifact_refs import SCHEME
from services.store.event_store import EVENTS_TABLE, EventStore
from services.store.log_reading import read_log
from services.store.sealing import BrokenSeal, Personal, opened_key, personal_of

PAGE = 1000
ARTIFACT_FIELDS = ("comment_ref", "corrected_artifact_ref")
ANOTHER_PERSON = "another person"
ANOTHER_PERSONS_WORDS = "[another person's words]"
ENVELOPE = frozenset({"originator_id", "originator_version", "timestamp", "originator_topic"})


def personal_topics(store: EventStore) -> list[str]:
    """The stored topics of event classes that declare personal fields."""
    from eventsourcing.utils import resolve_topic

    datastore = store.recorder.datastore  # type: ignore[attr-defined]  # PostgreSQL's
    with datastore.get_connection() as conn, conn.cursor(row_factory=tuple_row) as curs:
        curs.execute(f"SELECT DISTINCT topic FROM {EVENTS_TABLE}")
        topics = [topic for (topic,) in curs.fetchall()]
    found = []
    for topic in topics:
        try:
            cls = resolve_topic(topic)
        except Exception:  # a topic of a class no longer here: nothing declared on it
            continue
        if personal_of(cls) is not None:
            found.append(topic)
    return sorted(found)


@dataclass(frozen=True)
class Unopened:
    """An event of the person's that holds a sealed box failing authentication: where it is,
    the reason (aggregate, version, field, data key; never its content), and its artifacts'
    refs, which are never sealed, as stored (an erasure deletes those artifacts too)."""

    aggregate_id: UUID
    version: int
    reason: str
    artifacts: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Holdings:
    """The person's events, decoded, in log order, each as ``{topic, aggregateId, version,
    at, fields}``; and those that did not open (an incident, decisions D142)."""

    events: list[dict[str, Any]] = field(default_factory=list)
    unopened: list[Unopened] = field(default_factory=list)

    @property
    def aggregates(self) -> list[UUID]:
        """Where the person's data is, read or not: what the erasure's event lists."""
        read = [UUID(event["aggregateId"]) for event in self.events]
        return read + [broken.aggregate_id for broken in self.unopened]

    def artifact_refs(self) -> list[str]:
        """The artifacts the person's events reference, read or not."""
        unread = [{"fields": broken.artifacts} for broken in self.unopened]
        return artifact_refs(self.events + unread)


def person_events(
    store: EventStore,
    tenant_id: str,
    person: str,
    progress: Callable[[int, int], None] | None = None,
) -> Holdings:
    """The person's events, those that opened and those that did not.
    ``progress(position, head)`` after each page."""
    own = {str(k) for k in store.data_keys.person_keys(tenant_id, person)}
    keys = [k.encode() for k in own]
    if not keys:
        return Holdings()
    topics = personal_topics(store)
    head = store.recorder.max_notification_id() or 0
    found: list[dict[str, Any]] = []
    unopened: list[Unopened] = []
    after = 0
    while after < head and topics:
        after, page = read_log(store, after, PAGE, topics, upto=head)
        for notification in page:
            if any(key in notification.state for key in keys):
                try:
                    event = store.mapper.to_domain_event(notification)
                except BrokenSeal as broken:  # logged where met (sealing.broken_seal)
                    stored = store.mapper.transcoder.decode(notification.state)
                    unopened.append(
                        Unopened(
                            UUID(str(notification.originator_id)),
                            notification.originator_version,
                            str(broken),
                            {name: stored[name] for name in ARTIFACT_FIELDS if name in stored},
                        )
                    )
                    continue
                fields = as_json({k: v for k, v in vars(event).items() if k not in ENVELOPE})
                declared = personal_of(type(event))
                if declared is not None:
                    others_as_roles(fields, declared.names, person)
                    stored = store.mapper.transcoder.decode(notification.state)
                    withhold_others(fields, stored, declared, own)
                found.append({
                    "topic": notification.topic, "aggregateId": str(notification.originator_id),
                    # No log position: it would tell how much every other tenant wrote.
                    "version": notification.originator_version,
                    "at": event.timestamp.isoformat(),  # type: ignore[attr-defined]
                    "fields": fields,
                })  # fmt: skip
        if progress is not None:
            progress(after, head)
    return Holdings(found, unopened)


def others_as_roles(fields: dict[str, Any], names: Mapping[str, str], person: str) -> None:
    """Another person named in the person's events is shown by their role, never their id
    (decisions D136): the reviewer of their report is ``Reviewer``, the maintainer their
    report addressed ``AgentMaintainer``. The person's own id stays."""
    for path, role in names.items():
        field, _, inner = path.partition(".")
        holder, key = (fields.get(field), inner) if inner else (fields, field)
        if not isinstance(holder, dict) or holder.get(key) is None:
            continue
        value = holder[key]
        if isinstance(value, list):
            holder[key] = [item if item == person else role for item in value]
        elif value != person:
            holder[key] = role


def withhold_others(
    fields: dict[str, Any], stored: dict[str, Any], declared: Personal, own: set[str]
) -> None:
    """An event found by one field of the person's (the reviewer of another's report, whoever
    ran another's case) keeps the words and id of whoever else it holds out of this export
    (decisions D136): what is sealed under a key not the person's is withheld."""
    for path in declared.fields:
        field, _, inner = path.partition(".")
        shown = ANOTHER_PERSON if path in declared.identity else ANOTHER_PERSONS_WORDS
        if field.endswith("[]"):  # a key of each record of a list (a run's threads)
            name = field.removesuffix("[]")
            pairs = zip(stored.get(name) or [], fields.get(name) or [], strict=False)
            for item, shown_item in pairs:
                mine = isinstance(item, dict) and not _others(item.get(inner), own)
                if not mine and isinstance(shown_item, dict):
                    shown_item[inner] = shown
            continue
        value = stored.get(field)
        sealed = value.get(inner) if inner and isinstance(value, dict) else value
        holder = fields.get(field) if inner else fields
        if _others(sealed, own) and isinstance(holder, dict):
            holder[inner or field] = shown


def _others(sealed: Any, own: set[str]) -> bool:
    """Sealed under a key that is not the person's."""
    key = opened_key(sealed)
    return key is not None and str(key) not in own


def as_json(value: Any) -> Any:
    """An event's fields as JSON values (ids, times and contract models as their JSON)."""
    return orjson.loads(orjson.dumps(value, default=_json_default))


def _json_default(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    return dump(mode="json", by_alias=True) if dump is not None else str(value)


def artifact_refs(events: list[dict[str, Any]]) -> list[str]:
    """The artifacts of this service the person's events reference (a comment's text)."""
    refs = {
        str(value) for event in events for field, value in event["fields"].items()
        if field in ARTIFACT_FIELDS and isinstance(value, str) and value.lower().startswith(SCHEME)
    }  # fmt: skip
    return sorted(refs)
