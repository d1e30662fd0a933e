"""Everything the service holds about a person: the events sealed under their keys, decoded,
and the artifacts those events reference (an access request; also what an erasure deletes
beside the keys).

Found by reading the whole log once: an event is the person's if its stored state names one
of their data keys (a key id is random, so it names nothing else).
"""

from collections.abc import Callable
from typing import Any

import orjson
from psycopg.rows import tuple_row

from contracts.artifact_refs import SCHEME
from services.store.event_store import EVENTS_TABLE, EventStore
from services.store.log_reading import read_log
from services.store.sealing import personal_of

PAGE = 1000
ARTIFACT_FIELDS = ("comment_ref", "corrected_artifact_ref")
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


def person_events(
    store: EventStore,
    tenant_id: str,
    person: str,
    progress: Callable[[int, int], None] | None = None,
) -> list[dict[str, Any]]:
    """The person's events in log order, decoded, each as ``{topic, aggregateId, version,
    at, fields}``. ``progress(position, head)`` after each page."""
    keys = [str(k).encode() for k in store.data_keys.person_keys(tenant_id, person)]
    if not keys:
        return []
    topics = personal_topics(store)
    head = store.recorder.max_notification_id() or 0
    found: list[dict[str, Any]] = []
    after = 0
    while after < head and topics:
        after, page = read_log(store, after, PAGE, topics, upto=head)
        for notification in page:
            if any(key in notification.state for key in keys):
                event = store.mapper.to_domain_event(notification)
                fields = as_json({k: v for k, v in vars(event).items() if k not in ENVELOPE})
                found.append({
                    "topic": notification.topic, "aggregateId": str(notification.originator_id),
                    # No log position: it would tell how much every other tenant wrote.
                    "version": notification.originator_version,
                    "at": event.timestamp.isoformat(),  # type: ignore[attr-defined]
                    "fields": fields,
                })  # fmt: skip
        if progress is not None:
            progress(after, head)
    return found


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
