"""The eval runs' export (decisions D210–D212) on real PostgreSQL, with the nightly tests'
stand-in agent: a confirmed case run on demand is a row of the export, as CSV and as JSON
Lines, under the cases' filters; another tenant's export holds none of it."""

import csv
import io
import json

from tests.integration.test_comparable_runs import ASK, settled
from tests.integration.test_nightly import Door, auth, confirmed_case, door, standin

__all__ = ["door", "standin"]  # the fixtures of the nightly tests, used here


async def test_a_run_is_exported_as_csv_and_json_lines_under_the_cases_filters(
    door: Door,
) -> None:
    case_id = await confirmed_case(door, ASK)
    ran = await door.http.post(
        f"/factory/evals/cases/{case_id}/runs", json={"conversations": 1},
        headers=auth(door.keys.a),
    )  # fmt: skip
    assert ran.status_code == 201, ran.text
    await settled(door)
    route, mine = "/factory/evals/runs/export", auth(door.keys.a)
    lines = await door.http.get(route, params={"format": "jsonl"}, headers=mine)
    assert lines.status_code == 200, lines.text
    (run,) = [json.loads(line) for line in lines.text.splitlines()]
    assert (run["runId"], run["caseId"], run["ranBy"]) == (ran.json()["runId"], case_id, "alice")
    assert run["runner"] == "manual"
    assert len(run["threads"]) == 1
    as_csv = await door.http.get(route, params={"confirmed": "true"}, headers=mine)
    (row,) = list(csv.DictReader(io.StringIO(as_csv.text)))
    assert row["runId"] == run["runId"]
    assert row["summary.passed"] in ("true", "false")
    assert json.loads(row["threads"])[0]["index"] == run["threads"][0]["index"]
    unconfirmed = await door.http.get(route, params={"confirmed": "false"}, headers=mine)
    assert list(csv.DictReader(io.StringIO(unconfirmed.text))) == []
    other_agent = await door.http.get(route, params={"agent": "Nobody/Agent"}, headers=mine)
    assert list(csv.DictReader(io.StringIO(other_agent.text))) == []
    theirs = await door.http.get(route, params={"format": "jsonl"}, headers=auth(door.keys.b))
    assert (theirs.status_code, theirs.text) == (200, "")
