"""Who owns each aggregate: a table as small as the number of aggregates, filled by the
database in the very transaction that appends an aggregate's first event, so it can never
disagree with the store; and the one way to load an aggregate for a tenant (``load_owned``).
Every owned aggregate is created naming its tenant.
"""

from typing import Any
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError

from contracts.errors import NotFound
from services.store.event_store import EVENTS_TABLE, EventStore

TENANTS_TABLE = "aggregate_tenants"
TENANTS_DDL = f"""
CREATE TABLE IF NOT EXISTS {TENANTS_TABLE} (
    aggregate_id uuid NOT NULL,
    tenant_id text NOT NULL,
    -- Both in the key: a probe by (id, another tenant) finds no entry, exactly as a probe
    -- by an id that does not exist; with the id alone it would find one and then compare.
    PRIMARY KEY (aggregate_id, tenant_id)
);
"""
TENANTS_FUNCTION = f"""
-- Once per INSERT statement over its new rows (a transition table), not once per row: a
-- row-level trigger costs a large share of an append of many events.
CREATE OR REPLACE FUNCTION feedbackloop_record_tenant() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {TENANTS_TABLE}
        SELECT originator_id, tenant FROM (
            SELECT originator_id, convert_from(state, 'UTF8')::json ->> 'tenant_id' AS tenant
            FROM appended WHERE originator_version = 1
        ) AS firsts
        WHERE tenant IS NOT NULL
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
"""
TENANTS_TRIGGER = f"""
DROP TRIGGER IF EXISTS feedbackloop_record_tenant ON {EVENTS_TABLE};
CREATE TRIGGER feedbackloop_record_tenant AFTER INSERT ON {EVENTS_TABLE}
REFERENCING NEW TABLE AS appended
FOR EACH STATEMENT EXECUTE FUNCTION feedbackloop_record_tenant();
INSERT INTO {TENANTS_TABLE}
    SELECT originator_id, convert_from(state, 'UTF8')::json ->> 'tenant_id'
    FROM {EVENTS_TABLE}
    WHERE originator_version = 1 AND convert_from(state, 'UTF8')::json ->> 'tenant_id' IS NOT NULL
ON CONFLICT DO NOTHING;
"""
# pg_trigger.tgtype bit 0 is set for a row-level trigger: an older store's is replaced.
STATEMENT_TRIGGER = (
    "SELECT 1 FROM pg_trigger WHERE tgname = 'feedbackloop_record_tenant' AND tgtype & 1 = 0"
)


def ensure_tenants_table(store: EventStore) -> None:
    """The owners' table and the trigger that fills it; the first time, the owners of the
    aggregates already stored too (the trigger is created first, and waits for appends in
    flight, so none is missed). A row-level trigger of an older version is replaced."""
    datastore = store.recorder.datastore  # type: ignore[attr-defined]  # PostgreSQL's
    with datastore.transaction(commit=True) as curs:
        curs.execute("SELECT pg_advisory_xact_lock(hashtext('aggregate_tenants'))")
        curs.execute(TENANTS_DDL)
        curs.execute(STATEMENT_TRIGGER)
        if curs.fetchone() is None:  # the function changes with the trigger, in one transaction
            curs.execute(TENANTS_FUNCTION)
            curs.execute(TENANTS_TRIGGER)


def owned(store: EventStore, tenant_id: str, aggregate_id: UUID) -> bool:
    """Whether the aggregate exists and is the tenant's: one index probe by (id, tenant).

    Loading the whole aggregate and then comparing its tenant would make another tenant's id
    slower to refuse than an id that does not exist, telling whoever probes that it exists.
    Here both find no row through the same probe of a small table; only the caller's own
    aggregate is then loaded."""
    datastore = getattr(store.recorder, "datastore", None)
    if datastore is None:  # the in-memory store of the unit tests: no timing to hide
        try:
            return getattr(store.repository.get(aggregate_id), "tenant_id", None) == tenant_id
        except AggregateNotFoundError:
            return False
    with datastore.get_connection() as conn, conn.cursor() as curs:
        curs.execute(
            f"SELECT 1 FROM {TENANTS_TABLE} WHERE aggregate_id = %s AND tenant_id = %s",
            [aggregate_id, tenant_id],
        )
        return curs.fetchone() is not None


def load_owned(store: EventStore, tenant_id: str, aggregate_id: UUID, what: str) -> Any:
    """An aggregate of the caller's tenant; another tenant's is as absent as a missing one,
    and takes the same path to say so (``owned``)."""
    if not owned(store, tenant_id, aggregate_id):
        raise NotFound(f"no {what} {aggregate_id}", id=str(aggregate_id))
    aggregate: Any = store.repository.get(aggregate_id)
    return aggregate
