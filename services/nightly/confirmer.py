""" "The confirmer still holds the right to update" (SPEC W99, W100), asked when the night is
planned (a case whose confirmer lost it takes no slot, W95) and again just before the case runs.

The answer is the one rule engine's (decisions D103): the confirmer acts on the case as the
AssetMaintainer they confirmed it as (``ConfirmEvalCase`` permits ``MAINTAINER``), so they
hold the right while the agent register names them a maintainer of the case's agent
(``services.permissions.agent_register.require_maintainer``: the register is the one source
of maintainers, D23, D77), however they sign in: a key, an issuer's token, a console session.
The register is read from the store for each check, in whichever process plans or drives the
night (a standalone ``feedbackloop scheduler`` included, which holds no key ring kept fresh),
so a maintainer removed during the night stops the cases they confirmed at the next check. A
store that cannot be read makes the check unanswerable: the case is skipped saying so, never
read as a denial (W100).
"""

import asyncio
import logging
from typing import Any
from uuid import UUID

from contracts.errors import RoleRequired
from services.nightly.cases import RunsCases
from services.nightly.planning import CONFIRMER_LACKS_UPDATE, PERMISSION_CHECK_UNAVAILABLE
from services.permissions.agent_register import require_maintainer
from services.permissions.rules import MAINTAINER
from services.store.event_store import EventStore

log = logging.getLogger(__name__)

# The roles the confirmer acts in: those a case is confirmed, patched and run in.
ACTING_AS: frozenset[str] = frozenset(MAINTAINER)


def why_confirmer_cannot(
    store: EventStore, tenant_id: str, confirmer: str, agent: str | None
) -> str | None:
    """None when the confirmer may still update the case of ``agent``, else §3.8's reason."""
    try:
        require_maintainer(
            store, tenant_id, confirmer, ACTING_AS, agent or "", "a night's run of the case"
        )
    except RoleRequired:
        return CONFIRMER_LACKS_UPDATE
    except Exception:  # W100: whatever stops the read, the answer is "unknown", not "no"
        log.warning("nightly: the register could not be read for %s", confirmer, exc_info=True)
        return PERMISSION_CHECK_UNAVAILABLE
    return None


def rights_now(
    store: EventStore, tenant_id: str, confirmers: set[tuple[str, str | None]]
) -> dict[tuple[str, str | None], str | None]:
    """Each (confirmer, agent)'s answer, as the night is planned."""
    return {
        (confirmer, agent): why_confirmer_cannot(store, tenant_id, confirmer, agent)
        for confirmer, agent in sorted(confirmers, key=lambda pair: (pair[0], pair[1] or ""))
    }


async def right_before_the_run(
    store: EventStore, cases: RunsCases, tenant_id: str, case_id: UUID, confirmer: str
) -> tuple[Any, str | None]:
    """Just before a case runs (W99): the case, loaded to learn its agent, and why its
    confirmer may not run it now (None: they may). A case that cannot be loaded leaves the
    right unknown: ``permission-check-unavailable`` (W100), never a denial."""
    try:
        case = await cases.load(tenant_id, case_id)
    except Exception:
        log.warning("nightly: case %s could not be loaded", case_id, exc_info=True)
        return None, PERMISSION_CHECK_UNAVAILABLE
    reason = await asyncio.to_thread(why_confirmer_cannot, store, tenant_id, confirmer, case.agent)
    return case, reason
