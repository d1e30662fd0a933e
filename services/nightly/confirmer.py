""" "The confirmer still holds the right" (SPEC W99, W100), asked when the night is planned
(a case whose confirmer lost it takes no slot, W95) and again just before the case runs.

The stamped confirmer must still hold a live key of the case's tenant with the eval-write
scope, and not a service's key. The key store is read afresh for each check, so a key revoked
(or removed) during the night stops the cases its holder confirmed. A key store that cannot
be read makes the check unanswerable: the case is skipped saying so, never read as a denial.
"""

from collections.abc import Callable
from pathlib import Path

from services.edge.auth import ApiKeyEntry, KeyRing
from services.nightly.planning import CONFIRMER_LACKS_UPDATE, PERMISSION_CHECK_UNAVAILABLE

RUN_SCOPE = "factory.evaluation.run"

KeyStore = Callable[[], KeyRing]


class KeyStoreUnreadable(Exception):
    """The configured keys cannot be read now: no check can be answered."""


def read_key_store(inline: list[ApiKeyEntry], file: Path | None) -> KeyRing:
    """The configured keys as they stand now, read as at start-up (``KeyRing.load``), except
    that a keys file configured but missing, unreadable or invalid raises KeyStoreUnreadable."""
    try:
        return KeyRing.load(inline, file, missing_ok=False)
    except (OSError, ValueError) as error:
        raise KeyStoreUnreadable(str(error)) from None


def why_confirmer_cannot(keys: KeyStore, tenant_id: str, confirmer: str) -> str | None:
    """None when the confirmer may still run the case, else the §3.8 reason."""
    try:
        ring = keys()
    except Exception:  # W100: whatever stops the read, the answer is "unknown", not "no"
        return PERMISSION_CHECK_UNAVAILABLE
    if ring.grants(tenant_id, confirmer, RUN_SCOPE):
        return None
    return CONFIRMER_LACKS_UPDATE


def confirmers_now(keys: KeyStore, tenant_id: str, confirmers: set[str]) -> dict[str, str | None]:
    """Each confirmer's answer, as the night is planned."""
    return {name: why_confirmer_cannot(keys, tenant_id, name) for name in sorted(confirmers)}
