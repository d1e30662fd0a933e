"""At start, the configured master keys must open every data key (decisions D141).

A data key wrapped by a master key the settings do not hold (a wrong or missing
``FEEDBACKLOOP_MASTER_KEYS``), or one that does not unwrap under the master key named for it
(corrupted), would let the process start and then fail: the person's writes answer 500, and
a rebuild parks their events. So every process checks them all before it opens, and refuses
to start, naming each master key missing with how many data keys (of how many tenants) it
wraps, and the data keys that do not unwrap. All of them, not a sample: it is the load every
process makes of the keys on its first need anyway (``DataKeys._fresh``), a few microseconds
a key. Key ids and master key names only: never a person's name.
"""

from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any
from uuid import UUID

from cryptography.hazmat.primitives.keywrap import InvalidUnwrap, aes_key_unwrap
from psycopg.rows import tuple_row

from services.store.data_keys import KEYS_TABLE
from services.store.master_keys import DEVELOPMENT_MASTER_KEY, MasterKeys, master_id

SHOWN = 5  # data key ids named in the refusal; the rest counted


class MasterKeysRefused(RuntimeError):
    """The configured master keys do not open every data key: the process must not start."""


def check_master_keys(connect: Callable[[], Any], masters: MasterKeys) -> None:
    """Raise ``MasterKeysRefused`` unless ``masters`` open every data key in the database."""
    configured = {master_id(key): key for key in masters.keys}
    missing: dict[str, Counter[str]] = defaultdict(Counter)  # master → tenant → keys
    broken: list[UUID] = []
    total = 0
    with connect() as conn, conn.cursor(row_factory=tuple_row) as curs:
        curs.execute(f"SELECT key_id, tenant_id, master, wrapped FROM {KEYS_TABLE}")
        for key_id, tenant, master, wrapped in curs:
            total += 1
            key = configured.get(master)
            if key is None:
                missing[master][tenant] += 1
                continue
            try:
                aes_key_unwrap(key, bytes(wrapped))
            except InvalidUnwrap:
                broken.append(key_id)
    if missing or broken:
        raise MasterKeysRefused(refusal(configured, missing, broken, total))


def refusal(
    configured: dict[str, bytes],
    missing: dict[str, Counter[str]],
    broken: list[UUID],
    total: int,
) -> str:
    """What is wrong, in one paragraph an operator can act on."""
    held = ", ".join(configured)
    if list(configured.values()) == [DEVELOPMENT_MASTER_KEY]:
        held += " (the development key: FEEDBACKLOOP_MASTER_KEYS is not set)"
    said = [f"refusing to start: the configured master keys ({held}) do not open every data key"]
    for master, tenants in sorted(missing.items()):
        said.append(
            f"master key {master} is not in FEEDBACKLOOP_MASTER_KEYS and wraps "
            f"{sum(tenants.values())} of {total} data keys, of {len(tenants)} tenants "
            f"({', '.join(sorted(tenants)[:SHOWN])}{', …' if len(tenants) > SHOWN else ''})"
        )
    if broken:
        shown = ", ".join(str(key_id) for key_id in broken[:SHOWN])
        more = f" and {len(broken) - SHOWN} more" if len(broken) > SHOWN else ""
        said.append(
            f"{len(broken)} data keys do not unwrap under the master key named for them "
            f"(corrupted): {shown}{more}"
        )
    said.append(
        "list every master key that wrapped a data key, the current one first "
        "(docs/privacy.md, 'Master keys')"
    )
    return "; ".join(said)
