"""Master keys (decisions D47) on a real PostgreSQL: rotation by rewrapping the data keys
leaves the log as it is and readable under the new master key alone."""

import os
from datetime import UTC, datetime
from uuid import uuid4

import pytest

from services.reports.domain import Report
from services.store.master_keys import MasterKeys, master_id
from services.store.master_keys_check import MasterKeysRefused
from services.store.opening import open_store

pytestmark = pytest.mark.integration
OLD, NEW = MasterKeys((os.urandom(32),)), MasterKeys((os.urandom(32),))


def drafted(message: str) -> Report.Drafted:
    return Report.Drafted(
        originator_id=uuid4(), originator_version=1, timestamp=datetime.now(UTC),
        originator_topic="services.reports.domain:Report", tenant_id="t1", reporter="pat",
        category="answer", message=message, thread=None, message_ref=None,
        extra_context=None, command_id="c1", prompt=None, context=[], facts=None,
    )  # fmt: skip


def test_rewrapped_keys_open_the_log_under_the_new_master_key_alone(database_url: str) -> None:
    first = open_store(database_url, OLD)
    first.recorder.insert_events([first.mapper.to_stored_event(drafted("pat's words"))])
    first.close()

    # Without the old master key, nothing starts (decisions D141): it is named.
    with pytest.raises(MasterKeysRefused, match=f"master key {master_id(OLD.current)} is not"):
        open_store(database_url, NEW)

    rotating = open_store(database_url, MasterKeys(NEW.keys + OLD.keys))
    assert rotating.data_keys.rewrap() == 1
    assert rotating.data_keys.rewrap() == 0  # all under the current one now
    rotating.close()

    rotated = open_store(database_url, NEW)
    (notification,) = rotated.recorder.select_notifications(1, 1)
    assert rotated.mapper.to_domain_event(notification).message == "pat's words"  # type: ignore[attr-defined]
    rotated.close()
