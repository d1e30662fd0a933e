"""Personal data that does not open is an incident, never an erasure (decisions D141–D143), on
a real PostgreSQL: master keys that do not open every data key refuse the start, naming
them; a sealed box changed by one character is parked with its reason and counted in
``/readyz`` while an erased person still reads ``[erased]``; a rebuild that parks such an
event is not swapped in, and the live read model keeps the report."""

import asyncio
import base64
import json
import os
import sys
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import pytest
import typer
from eventsourcing.persistence import StoredEvent

from projections.inbox import Inbox
from services.followers.parked import list_parked
from services.followers.waiting import wait_for_position
from services.processes import roles
from services.processes.bootstrap import Runtime
from services.processes.health import SEALS
from services.processes.lifetime import lived
from services.projecting.rebuild import rebuild_many
from services.projecting.swapping import RebuildParked
from services.store.event_store import EVENTS_TABLE
from services.store.master_keys import master_id
from services.store.master_keys_check import MasterKeysRefused
from services.store.sealing import ERASED, BrokenSeal, is_sealed
from tests.conftest import Keys, client_for, settings_for
from tests.integration.door_checks import read_models_caught_up
from tests.unit.test_wrong_answer import SEED_FACTS

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]


async def reported(http: httpx.AsyncClient, words: str) -> UUID:
    """A submitted wrong-answer report in the caller's words; its id."""
    body = {**SEED_FACTS, "account": f"account {words}", "expected": f"expected {words}"}
    drafted = await http.post("/factory/reports/wrong-answer", json=body)
    assert drafted.status_code == 201, drafted.text
    report_id = drafted.json()["reportId"]
    submitted = await http.post(f"/factory/reports/{report_id}/submit")
    assert submitted.status_code == 200, submitted.text
    return UUID(report_id)


async def stored_draft(runtime: Runtime, report_id: UUID) -> tuple[StoredEvent, dict[str, Any]]:
    row = await runtime.pool.fetchrow(
        f"SELECT originator_id, originator_version, topic, state FROM {EVENTS_TABLE} "
        "WHERE originator_id = $1 AND originator_version = 1",
        report_id,
    )
    assert row is not None
    stored = StoredEvent(row[0], row[1], row[2], bytes(row[3]))
    return stored, json.loads(stored.state)


async def one_character_changed(runtime: Runtime, report_id: UUID) -> str:
    """The draft's first sealed field with one character of its box changed; its name."""
    _, state = await stored_draft(runtime, report_id)
    field = next(name for name, value in state.items() if is_sealed(value))
    box = state[field]["box"]
    at = len(box) // 2
    state[field]["box"] = box[:at] + ("A" if box[at] != "A" else "B") + box[at + 1 :]
    await runtime.pool.execute(
        f"UPDATE {EVENTS_TABLE} SET state = $1 WHERE originator_id = $2 AND originator_version = 1",
        json.dumps(state).encode(),
        report_id,
    )
    return field


def tenant_of(keys: Keys) -> str:
    tenant: str = json.loads(keys.entries)[0]["tenant"]
    return tenant


async def test_a_box_changed_by_one_character_is_parked_as_an_incident_never_read_as_erased(
    runtime: Runtime, keys: Keys
) -> None:
    async with client_for(runtime, keys.a) as alice, client_for(runtime, keys.a_other) as anna:
        tampered = await reported(alice, "zebra")
        erased = await reported(anna, "okapi")
    await asyncio.to_thread(runtime.store.data_keys.destroy_person, tenant_of(keys), "anna")
    field = await one_character_changed(runtime, tampered)

    stored, _ = await stored_draft(runtime, tampered)
    with pytest.raises(BrokenSeal, match=f"aggregate {tampered} version 1, field '{field}'"):
        runtime.store.mapper.to_domain_event(stored)
    stored, _ = await stored_draft(runtime, erased)
    assert runtime.store.mapper.to_domain_event(stored).message == ERASED  # type: ignore[attr-defined]

    runtime.start_projections()
    await read_models_caught_up(runtime)
    parked = await list_parked(runtime.pool)
    assert parked, "the tampered draft is parked by the readers that read it"
    assert {p.originator_id for p in parked} == {tampered}
    first = [p for p in parked if p.behind is None]
    assert first
    assert all(p.error.startswith("BrokenSeal: the sealed box at") for p in first)
    async with client_for(runtime, keys.a) as alice:
        readiness = (await alice.get("/readyz")).json()
        assert readiness["degraded"] is True
        (incident,) = readiness["incidents"][SEALS]
        assert "1 events hold a sealed box that fails authentication" in incident
        # The erased person's report still reads as erased, and is there.
        shown = await alice.get(f"/factory/reports/{erased}")
        assert shown.status_code == 200, shown.text
        assert ERASED in json.dumps(shown.json())
        assert "okapi" not in shown.text
        assert (await alice.get(f"/factory/reports/{tampered}")).status_code == 404


async def test_a_rebuild_that_parks_an_event_is_not_swapped_in(
    runtime: Runtime, keys: Keys
) -> None:
    """Before, the rebuilt Inbox, without the report it could not read, was swapped in, and
    the report answered 404."""
    async with client_for(runtime, keys.a) as alice:
        tampered = await reported(alice, "zebra")
        kept = await reported(alice, "okapi")
    runtime.start_projections(["inbox"])
    head = await asyncio.to_thread(runtime.store.recorder.max_notification_id) or 0
    assert await wait_for_position(runtime.pool, "rm_inbox", head, 30) >= head
    await one_character_changed(runtime, tampered)

    with pytest.raises(RebuildParked) as refused:
        await rebuild_many(runtime.store, runtime.pool, [Inbox()])
    assert list(refused.value.parked) == ["rm_inbox__rebuild"]
    assert "rm_inbox__rebuild parked" in str(refused.value)
    assert "BrokenSeal" in str(refused.value)
    async with client_for(runtime, keys.a) as alice:
        for report in (tampered, kept):  # the live Inbox, as it was
            answer = await alice.get(f"/factory/reports/{report}")
            assert answer.status_code == 200, answer.text

    # As an operator runs it: it says what was parked and exits 1, swapping nothing.
    env = {
        **os.environ,
        "DATABASE_URL": runtime.database_url,
        "FEEDBACKLOOP_API_KEYS": keys.entries,
    }
    command = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "services.processes.cli", "rebuild", "inbox"),
        cwd=Path(__file__).parents[2],
        env={**env, "COLUMNS": "400"},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    said, _ = await asyncio.wait_for(command.communicate(), 120)
    assert command.returncode == 1, said.decode()
    assert "rm_inbox__rebuild parked" in said.decode()
    async with client_for(runtime, keys.a) as alice:
        assert (await alice.get(f"/factory/reports/{tampered}")).status_code == 200


async def test_master_keys_that_do_not_open_every_data_key_refuse_the_start_naming_them(
    database_url: str, keys: Keys, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before, the process started; the person's writes answered 500 and a rebuild parked
    their events, swapping in read models without them."""
    first, wrong = os.urandom(32), os.urandom(32)
    settings = settings_for(database_url, keys).model_copy(
        update={"master_keys": [base64.b64encode(first).decode()]}
    )
    runtime = await Runtime.open(settings)
    try:
        async with client_for(runtime, keys.a) as alice:
            await reported(alice, "zebra")
    finally:
        await runtime.close()

    misconfigured = settings.model_copy(update={"master_keys": [base64.b64encode(wrong).decode()]})
    with pytest.raises(MasterKeysRefused) as refused:
        await Runtime.open(misconfigured)
    said = str(refused.value)
    assert f"master key {master_id(first)} is not in FEEDBACKLOOP_MASTER_KEYS" in said
    assert f"({master_id(wrong)})" in said  # what the settings hold
    assert tenant_of(keys) in said
    assert "alice" not in said  # tenants, never people

    async def nothing(_: Runtime) -> None:
        raise AssertionError("never opened")

    with pytest.raises(typer.Exit) as exited:  # a command: one line, exit 3, no traceback
        await lived(misconfigured, roles.OPERATOR, nothing, long_running=False)
    assert exited.value.exit_code == 3
    assert "refusing to start" in capsys.readouterr().err

    rotating = settings.model_copy(  # both listed: it starts
        update={"master_keys": [base64.b64encode(k).decode() for k in (wrong, first)]}
    )
    await (await Runtime.open(rotating)).close()


async def test_an_erasures_rebuild_is_swapped_in_even_when_it_parks(
    runtime: Runtime, keys: Keys
) -> None:
    """The exception to D143: keys destroyed, the erased words must leave the live read
    models; what the rebuild parked is handed to the live reader, counted in ``/readyz``."""
    async with client_for(runtime, keys.a) as alice:
        tampered = await reported(alice, "zebra")
    runtime.start_projections(["inbox"])
    head = await asyncio.to_thread(runtime.store.recorder.max_notification_id) or 0
    assert await wait_for_position(runtime.pool, "rm_inbox", head, 30) >= head
    await one_character_changed(runtime, tampered)

    rebuild = runtime.given().rebuild
    assert rebuild is not None
    await rebuild()
    parked = await list_parked(runtime.pool, "rm_inbox")
    assert {p.originator_id for p in parked} == {tampered}
    async with client_for(runtime, keys.a) as alice:
        assert (await alice.get(f"/factory/reports/{tampered}")).status_code == 404
        assert SEALS in (await alice.get("/readyz")).json()["incidents"]


async def test_a_persons_tampered_box_refuses_their_export_naming_it_and_their_erasure_goes_on(
    runtime: Runtime, keys: Keys
) -> None:
    """Decisions D145. Before, both answered 500: the person's events were decoded whole,
    and the first box that did not open failed the request. The erasure goes on (the key is
    destroyed all the same, the event listed among the erased aggregates); the export, which
    would lack the event, is refused naming the incident and where it is."""
    async with client_for(runtime, keys.a_other) as anna:
        tampered = await reported(anna, "zebra")
        kept = await reported(anna, "okapi")
    field = await one_character_changed(runtime, tampered)

    async with client_for(runtime, keys.a) as alice:  # the tenant's PlatformAdmin (D26)
        refused = await alice.get("/factory/people/anna/export")
        assert refused.status_code == 409, refused.text
        problem = refused.json()
        assert (problem["error"], problem["incident"]) == ("unreadable", SEALS)
        assert f"aggregate {tampered} version 1, field '{field}'" in problem["message"]
        assert problem["unopened"] == [{"aggregateId": str(tampered), "version": 1}]
        assert "zebra" not in refused.text

    # The operator's export says the same in one line and exits 1, writing nothing.
    command = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "services.processes.cli", "export"),
        *("--tenant", tenant_of(keys), "--person", "anna"),
        cwd=Path(__file__).parents[2],
        env={**os.environ, "DATABASE_URL": runtime.database_url, "COLUMNS": "400",
             "FEEDBACKLOOP_API_KEYS": keys.entries},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    written, said = await asyncio.wait_for(command.communicate(), 120)
    assert command.returncode == 1, said.decode()
    assert f"aggregate {tampered} version 1" in said.decode()
    assert "Traceback" not in said.decode()
    assert written == b""

    async with client_for(runtime, keys.a) as alice:
        erased = await alice.delete("/factory/people/anna")
        assert erased.status_code == 200, erased.text
        assert erased.json()["keysDestroyed"] >= 1
        erasure = await asyncio.to_thread(
            runtime.store.repository.get, UUID(erased.json()["erasureId"])
        )
        assert {str(tampered), str(kept)} <= set(erasure.aggregates)
        shown = await alice.get(f"/factory/reports/{kept}")
        assert shown.status_code == 200, shown.text
        assert ERASED in json.dumps(shown.json())
        assert "okapi" not in shown.text
        # Nothing of theirs opens any more: the export holds nothing, and is no incident.
        after = await alice.get("/factory/people/anna/export")
        assert after.status_code == 200, after.text
        assert after.json()["events"] == []
