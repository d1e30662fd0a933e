"""``feedbackloop rebuild`` as an operator runs it: every read model at once,
beside the live service, then swapped in; the service answers the same before and after, and
feedback recorded while the rebuild runs is not lost."""

import asyncio
import os
import sys

import asyncpg
import httpx
import pytest

from services.processes.contexts import read_models
from tests.conftest import Keys
from tests.e2e.conftest import ROOT, Service, auth

FEEDBACK = 300


def body(n: int) -> dict[str, object]:
    return {
        "projectId": "rebuild",
        "subjectKind": "run",
        "subjectRef": f"run-{n % 7}",
        "kind": "rating",
        "rating": 1 + n % 5,
    }


async def listed(http: httpx.AsyncClient, key: str) -> list[str]:
    ids: list[str] = []
    before = None
    while True:
        params: dict[str, str | int] = {"limit": 200} | ({"before": before} if before else {})
        page = await http.get("/factory/feedback", params=params, headers=auth(key))
        assert page.status_code == 200, page.text
        ids += [item["feedbackId"] for item in page.json()["items"]]
        if (before := page.json()["next"]) is None:
            return ids


@pytest.mark.parametrize(
    "processes", [[], ["--processes", "2"]], ids=["together", "feedback-apart"]
)
async def test_rebuild_of_every_read_model_beside_the_live_service(
    http: httpx.AsyncClient, keys: Keys, service: Service, database_url: str, processes: list[str]
) -> None:
    """With ``--processes 2``, worker processes started from the command line load the
    feedback apart (``services.projecting.apart``); below 100,000 events it is loaded together."""
    recorded = [
        (await http.post("/factory/feedback", json=body(n), headers=auth(keys.a))).json()
        for n in range(FEEDBACK)
    ]
    env = {**os.environ, "DATABASE_URL": database_url, "FEEDBACKLOOP_API_KEYS": keys.entries}
    rebuild = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "services.processes.cli", "rebuild", *processes),
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    during = [  # recorded while the rebuild runs: the swap must keep them
        (await http.post("/factory/feedback", json=body(n), headers=auth(keys.a))).json()
        for n in range(20)
    ]
    async with asyncio.timeout(120):
        output = (await rebuild.communicate())[0].decode()
    assert rebuild.returncode == 0, output
    for projection in read_models():
        assert f"{projection.name}: rebuilt up to" in output, output
    assert ("2 worker processes load the events of" in output) == bool(processes), output

    expected = {item["feedbackId"] for item in recorded + during}
    deadline = asyncio.get_running_loop().time() + 30
    while set(await listed(http, keys.a)) != expected:
        assert asyncio.get_running_loop().time() < deadline, "the rebuilt list misses feedback"
        await asyncio.sleep(0.2)
    # The appraisal read model writes a page's feedback in bulk: every piece is there once.
    conn = await asyncpg.connect(database_url)
    try:
        while True:
            kept = await conn.fetch("SELECT feedback_id FROM rm_appraisal.feedback")
            if {str(row["feedback_id"]) for row in kept} == expected:
                break
            assert asyncio.get_running_loop().time() < deadline, len(kept)
            await asyncio.sleep(0.2)
    finally:
        await conn.close()
