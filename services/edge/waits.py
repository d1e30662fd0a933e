"""Read-your-writes: a read given ``?minPosition=`` (``services.edge.parameters``) waits until
its read model has applied that write, or answers 503 (``NotYetVisible``) after the wait."""

from typing import Any

from contracts.errors import Refused
from projections.read_model import schema_named
from services.edge.positions import PositionSeal
from services.edge.problems import NotYetVisible
from services.followers.waiting import wait_for_position
from services.store.event_store import EVENTS_TABLE


async def wait_until_applied(
    pool: Any,
    positions: PositionSeal,
    read_model: str,
    min_position: str,
    tenant_id: str,
    seconds: float,
) -> None:
    """Wait until ``read_model`` has applied the write whose sealed position is
    ``min_position``. A position past the log's head cannot be waited into existence: it is
    refused at once instead of holding the request for the whole wait."""
    wanted = positions.open(min_position, tenant_id)
    head = await pool.fetchval(f"SELECT max(notification_id) FROM {EVENTS_TABLE}")
    if wanted > (head or 0):
        raise Refused("minPosition is past every write so far", field="minPosition")
    reached = await wait_for_position(pool, schema_named(read_model), wanted, seconds)
    if reached < wanted:
        raise NotYetVisible(read_model)
