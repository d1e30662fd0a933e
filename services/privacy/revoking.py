"""An erased person acts no more (decisions D146): every API key issued to them through the
store is revoked and every role granted to them taken back, by the very commands `keys
revoke` and `roles revoke` issue, so each is an event, an audit row, and gone from every
process's key ring at its next request (decisions D29).

Found in the person's own events (a key's holder and a role's holder are sealed under their
keys, decisions D130), before the erasure destroys those keys. A key revoked already, or a
role taken back already, decides nothing, as when an admin revokes it twice. A key configured
in the settings (``FEEDBACKLOOP_API_KEYS`` or its file) is no event: the service cannot
revoke it; it is named in the log, by its hash, for the operator to remove.
"""

import logging
from collections.abc import Iterable
from dataclasses import replace
from typing import Any
from uuid import UUID

from pydantic import BaseModel

from contracts.access import RevokeApiKey, RevokeRole
from projections.events import KEY_ISSUED, ROLE_GRANTED
from services.bus.command_bus import CommandBus
from services.bus.issued import Issued
from services.edge.auth import ApiKeyEntry

log = logging.getLogger(__name__)


def access_revocations(events: list[dict[str, Any]], person: str) -> list[BaseModel]:
    """The commands that take the person's stored keys and granted roles away: a key issued
    to them, a role ever granted to them (one not held any more decides nothing)."""
    keys = sorted({
        event["aggregateId"] for event in events
        if event["topic"] == KEY_ISSUED and event["fields"].get("subject") == person
    })  # fmt: skip
    roles = sorted({
        event["fields"]["role"] for event in events
        if event["topic"] == ROLE_GRANTED and event["fields"].get("subject") == person
    })  # fmt: skip
    revoked: list[BaseModel] = [RevokeApiKey(key_id=UUID(key)) for key in keys]
    return revoked + [RevokeRole.model_validate({"subject": person, "role": r}) for r in roles]


async def revoke_access(
    bus: CommandBus, erasing: Issued, person: str, events: list[dict[str, Any]]
) -> int:
    """Issue the revocations as the erasure's own caller (its tenant, actor, roles and door),
    each under a command id of the erasure's. Answers the position of the last (0: none)."""
    position = 0
    for index, command in enumerate(access_revocations(events, person)):
        issued = replace(
            erasing, command=command, command_id=f"{erasing.command_id}/revoke/{index}",
            identity=None, digest=None, new=False,
        )  # fmt: skip
        position = (await bus.execute(issued)).position
    return position


def warn_of_configured(entries: Iterable[ApiKeyEntry], tenant_id: str, person: str) -> None:
    """A configured key of the person still acts, as them, once they are erased: say which,
    by its hash (never who: the log names no person, decisions D134)."""
    for entry in entries:
        if entry.tenant == tenant_id and entry.subject == person and not entry.revoked:
            log.warning(
                "erasure: the configured API key sha256:%s… names the erased person; the "
                "service cannot revoke a key of the settings: remove it from "
                "FEEDBACKLOOP_API_KEYS or its file (decisions D146)",
                entry.sha256[:16],
            )
