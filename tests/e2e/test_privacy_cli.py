"""``feedbackloop export`` and ``erase`` as an operator runs them against a running service
(decisions D43, D46): the export holds the person's words; after the erasure the service
answers them as erased and another export finds nothing left to read."""

import asyncio
import json
import os
import sys

import httpx

from tests.conftest import Keys
from tests.e2e.conftest import ROOT, Service, auth


async def cli(database_url: str, keys: Keys, *argv: str) -> tuple[int, str, str]:
    env = {**os.environ, "DATABASE_URL": database_url, "FEEDBACKLOOP_API_KEYS": keys.entries}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "services.processes.cli", *argv, cwd=ROOT, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_an_operator_exports_then_erases_a_person(
    http: httpx.AsyncClient, keys: Keys, service: Service, database_url: str
) -> None:
    drafted = await http.post(
        "/factory/reports", headers=auth(keys.a),
        json={"category": "answer", "message": "the words of alice, kept until erased"},
    )  # fmt: skip
    assert drafted.status_code == 201, drafted.text
    report_id = drafted.json()["reportId"]
    submitted = await http.post(f"/factory/reports/{report_id}/submit", headers=auth(keys.a))
    assert submitted.status_code == 200, submitted.text
    tenant = json.loads(keys.entries)[0]["tenant"]

    code, out, err = await cli(
        database_url, keys, "export", "--tenant", tenant, "--person", "alice"
    )
    assert code == 0, err
    held = json.loads(out)
    assert [e["fields"]["message"] for e in held["events"]] == [
        "the words of alice, kept until erased"
    ]
    assert "reading the log" in err  # the progress bar, on stderr

    code, _, err = await cli(database_url, keys, "erase", "--tenant", tenant, "--person", "alice")
    assert code == 0, err
    assert "1 keys destroyed" in err

    shown = await http.get(f"/factory/reports/{report_id}", headers=auth(keys.a))
    assert shown.json()["message"] == "[erased]"
    code, out, _ = await cli(database_url, keys, "export", "--tenant", tenant, "--person", "alice")
    assert json.loads(out)["events"] == []
