"""Each door refuses what the store and the readers cannot hold, naming the field (422), before
anything is stored: one tenant's input never parks a reader, fails ``/readyz`` or breaks a rule
for everybody (the bulkhead). One test per kind of input refused."""

import uuid
from typing import Any

import grpc
import httpx
import pytest

from contracts.learning_pb2 import GetDatasetSnapshotRequest
from contracts.learning_pb2_grpc import LearningStub
from services.processes.bootstrap import Runtime
from tests.conftest import Keys, event_count
from tests.integration.door_checks import cloudevent, nothing_parked, post_event, put_charter
from tests.integration.test_dataset_grpc import bearer, free_port
from tests.integration.test_learning import ORDER, generator

RUN = "factory.runs.v1.RunCompleted"
DRIFT = "factory.quality.v1.DriftDetected"


def run_completed(**data: Any) -> dict[str, Any]:
    return {
        "runId": "r-1",
        "agentId": "coach",
        "outcome": "succeeded",
        "inputRef": "urn:input:1",
        "completedAt": "2026-11-30T10:00:00Z",
        **data,
    }


def drift(**data: Any) -> dict[str, Any]:
    return {
        "driftId": f"d-{uuid.uuid4().hex[:6]}",
        "targetAssetId": "agent-42",
        "metric": "groundedness",
        "baseline": 0.8,
        "observed": 0.5,
        "detectedAt": "2026-11-30T10:00:00Z",
        **data,
    }


@pytest.fixture
async def live(runtime: Runtime) -> Runtime:
    runtime.start_projections()
    return runtime


async def refused(
    runtime: Runtime, client: httpx.AsyncClient, kind: str, data: Any, field: str, **attrs: Any
) -> None:
    """The event is a 422 naming ``field``, nothing is stored, and nothing parks."""
    before = await event_count(runtime)
    answer = await post_event(client, cloudevent(kind, data, **attrs))
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == field, answer.json()
    assert await event_count(runtime) == before
    await nothing_parked(runtime, client)


async def test_an_instant_before_year_one_in_utc_is_refused_naming_the_field(
    live: Runtime, client: httpx.AsyncClient
) -> None:
    """Year 1 at +23:59 is year 0 in UTC: PostgreSQL cannot store it, and the datasets and
    appraisal read models parked on it (and /readyz failed for the whole instance)."""
    data = run_completed(completedAt="0001-01-01T00:00:00+23:59")
    await refused(live, client, RUN, data, "completedAt")


async def test_an_instant_after_year_9999_in_utc_is_refused_naming_the_field(
    live: Runtime, client: httpx.AsyncClient
) -> None:
    data = drift(detectedAt="9999-12-31T23:59:59-00:01")
    await refused(live, client, DRIFT, data, "detectedAt")


async def test_an_instant_without_its_offset_is_refused_naming_the_field(
    live: Runtime, client: httpx.AsyncClient
) -> None:
    await refused(live, client, RUN, run_completed(completedAt="2026-11-30T10:00:00"),
                  "completedAt")  # fmt: skip


async def test_a_cloudevent_time_outside_years_one_to_9999_in_utc_is_refused(
    live: Runtime, client: httpx.AsyncClient
) -> None:
    await refused(live, client, RUN, run_completed(), "time", time="0001-01-01T00:00:00+01:00")


@pytest.mark.parametrize("spelt", ["NaN", "Infinity", "-Infinity", "1e400", "-1e400"])
async def test_a_non_finite_number_written_as_a_string_is_refused_naming_the_field(
    live: Runtime, client: httpx.AsyncClient, spelt: str
) -> None:
    """A JSON number is finite: a string spelling NaN or infinity is no number, and read
    laxly it would become one no rule can compute with."""
    await refused(live, client, DRIFT, drift(observed=spelt), "observed")


async def test_a_number_beyond_a_double_is_refused_naming_the_field(
    live: Runtime, client: httpx.AsyncClient
) -> None:
    event = cloudevent(DRIFT, drift(baseline=0.5))
    body = json_with(event, '"baseline": 0.5', '"baseline": 1e400')
    answer = await post_event(client, body)
    assert answer.status_code == 422, answer.text
    await nothing_parked(live, client)


def json_with(event: Any, old: str, new: str) -> bytes:
    import json

    text = json.dumps(event)
    assert old in text
    return text.replace(old, new).encode()


async def test_a_drift_the_rules_cannot_sum_is_refused_at_the_door(
    live: Runtime, client: httpx.AsyncClient
) -> None:
    """Three drifts of 1.7e308 and -1.7e308 made the daily proposal generator overflow (a mean
    of them), for every tenant sorted after this one, every day."""
    await refused(live, client, DRIFT, drift(baseline=1.7e308, observed=-1.7e308), "baseline")


async def test_a_bounded_drift_is_applied(live: Runtime, client: httpx.AsyncClient) -> None:
    answer = await post_event(client, cloudevent(DRIFT, drift(baseline=1e15, observed=-1e15)))
    assert answer.status_code == 201, answer.text
    await nothing_parked(live, client)


@pytest.mark.parametrize("spelling", ["\\u0000", "\\U00000000"])
async def test_a_charter_holding_nul_is_refused_naming_the_line(
    live: Runtime, client: httpx.AsyncClient, spelling: str
) -> None:
    """No text holds NUL in any spelling: PostgreSQL's text cannot store it, so a charter
    holding TOML's escape of it is refused whole, and the charter before it stays."""
    good = '[[line]]\nid = "a"\ntext = "Answers rest on sources."\n'
    assert (await put_charter(client, good)).status_code == 200
    bad = f'[[line]]\nid = "a"\ntext = "Answers{spelling} rest on sources."\n'
    answer = await put_charter(client, bad)
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == "line[1].text"
    await nothing_parked(live, client)
    first = await client.get("/factory/appraisal/charter")
    assert first.json()["lines"][0]["text"] == "Answers rest on sources."


async def test_a_first_charter_holding_nul_is_refused(
    live: Runtime, client: httpx.AsyncClient
) -> None:
    answer = await put_charter(client, '[[line]]\nid = "a\\u0000"\ntext = "t"\n')
    assert (answer.status_code, answer.json()["field"]) == (422, "line[1].id"), answer.text
    await nothing_parked(live, client)


@pytest.mark.parametrize(
    ("kind", "setpoint"),
    [
        ("outbox_waiting", '"²"'),
        ("outbox_waiting", '"' + "9" * 400 + '"'),
        ("outbox_waiting", "9" * 400),
        ("outbox_waiting", "9" * 5000),  # past Python's int digit limit (was a 500)
        ("outbox_age", "9" * 5000),
        ("intervention_rate", "9_" * 4999 + "9"),
        ("outbox_waiting", '"٣"'),
        ("request_closure", '"' + "9" * 400 + 's"'),
        ("request_closure", '"٣d"'),
        ("intervention_rate", '"' + "9" * 400 + '%"'),
        ("intervention_rate", '"NaN"'),
        ("intervention_rate", "9" * 400),
        ("intervention_rate", "2"),
        ("intervention_rate", "nan"),
    ],
)
async def test_a_setpoint_out_of_its_grammar_or_range_is_refused_naming_the_line(
    live: Runtime, client: httpx.AsyncClient, kind: str, setpoint: str
) -> None:
    """A setpoint is written in its sensor's grammar, in ASCII digits, finite and within the
    sensor's range (a rate at most 1): ``"²"``, ``"٣"`` or 400 digits are refused naming it."""
    document = (
        f'[[line]]\nid = "a"\ntext = "t"\nsensor = {{ kind = "{kind}", setpoint = {setpoint} }}\n'
    )
    answer = await put_charter(client, document)
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == "line[1].sensor.setpoint"


async def test_a_zero_width_space_is_no_rejection_reason(client: httpx.AsyncClient) -> None:
    for blank in ("\u200b", " \u200b\u2060\ufeff ", "\u200c\u200d"):
        answer = await client.post(
            f"/factory/learning/proposals/{uuid.uuid4()}/decide",
            json={"decision": "reject", "reason": blank},
        )
        assert (answer.status_code, answer.json()["field"]) == (422, "reason"), answer.text


async def test_a_run_completed_with_a_malformed_artifact_reference_is_refused(
    live: Runtime, client: httpx.AsyncClient
) -> None:
    for ref in ("artifact:nope", "artifact:sha256:" + "z" * 64, "ARTIFACT:sha256:12"):
        await refused(live, client, RUN, run_completed(inputRef=ref), "inputRef")
        await refused(live, client, RUN, run_completed(outputRef=ref), "outputRef")


async def test_a_cloudevent_id_of_blanks_is_refused(
    live: Runtime, client: httpx.AsyncClient
) -> None:
    for blank in ("   ", "\u200b"):
        await refused(live, client, RUN, run_completed(), "id", id=blank)
        await refused(live, client, RUN, run_completed(), "source", source=blank)


@pytest.mark.parametrize(
    "time", ["0000-01-01T00:00:00Z", "10000-01-01T00:00:00Z", "9999-12-31T23:59:59-01:00", 5]
)
async def test_a_cloudevent_time_out_of_range_is_refused_naming_time(
    live: Runtime, client: httpx.AsyncClient, time: object
) -> None:
    """Year 0 and year 10000 are refused by the SDK's own reader, an instant past 9999 in UTC
    by the envelope (``contracts.scalars.Instant``): both name ``time``, not ``value``."""
    await refused(live, client, RUN, run_completed(), "time", time=time)


async def test_blank_names_in_a_neighbour_event_are_refused(
    live: Runtime, client: httpx.AsyncClient
) -> None:
    await refused(live, client, DRIFT, drift(metric="\u200b "), "metric")
    await refused(live, client, RUN, run_completed(agentId="\u2060"), "agentId")


@pytest.mark.parametrize("version", ["1.0", "+1", "01", "1_0", "١", " 1", "1e0", "0x1"])
async def test_a_dataset_version_is_written_in_ascii_digits_only(
    client: httpx.AsyncClient, version: str
) -> None:
    answer = await client.get(f"/factory/evaluation/datasets/ds-1/versions/{version}")
    assert (answer.status_code, answer.json()["field"]) == (422, "version"), answer.text


async def test_a_canonical_dataset_version_is_read(client: httpx.AsyncClient) -> None:
    answer = await client.get("/factory/evaluation/datasets/ds-1/versions/1")
    assert answer.status_code == 404, answer.text


@pytest.mark.parametrize(
    "date", ["2026-11-30T00:00:00", "2026-11-30T00:00:00Z", "2026-11-3٠", "20261130", "1700000000"]
)
async def test_a_night_is_named_by_its_date_alone(client: httpx.AsyncClient, date: str) -> None:
    answer = await client.get(f"/factory/evals/nights/{date}")
    assert (answer.status_code, answer.json()["field"]) == (422, "date"), answer.text
    assert (await client.get("/factory/evals/nights/2026-11-30")).status_code == 404


@pytest.mark.parametrize("week", ["٢٠٢٦-W48", "2026-W٤٨", "2026-w48", "2026-W48%0A", "2026-W4"])
async def test_a_week_is_written_in_ascii_digits(client: httpx.AsyncClient, week: str) -> None:
    answer = await client.get(f"/factory/feedback/digests/{week}")
    assert (answer.status_code, answer.json()["field"]) == (422, "week"), answer.text
    assert (await client.get("/factory/feedback/digests/2026-W48")).status_code == 404


@pytest.mark.parametrize("week", ["2026-W54", "2025-W53", "2026-W00", "0000-W01"])
async def test_a_week_the_calendar_does_not_have_is_refused_as_a_day_it_does_not_have_is(
    client: httpx.AsyncClient, week: str
) -> None:
    """A night of 2026-02-30 is 422 naming ``date``; a week 54, a week 0 or a week of year 0
    was looked for and answered 404, as if a digest of it could exist. (2025 has 52 ISO
    weeks, 2026 has 53.)"""
    answer = await client.get(f"/factory/feedback/digests/{week}")
    assert (answer.status_code, answer.json()["field"]) == (422, "week"), answer.text
    assert (await client.get("/factory/feedback/digests/2026-W53")).status_code == 404


@pytest.mark.parametrize(
    ("dataset_id", "version", "field"),
    [
        ("ds 1", 1, "dataset_id"),  # not a dataset id the HTTP path takes
        ("ds\x00", 1, "dataset_id"),
        ("x" * 100_000, 1, "dataset_id"),
        ("", 1, "dataset_id"),
        ("ds-1", 0, "version"),
        ("ds-1", 1_000_001, "version"),
    ],
)
async def test_a_grpc_request_is_held_to_the_path_s_scalars_naming_the_field(
    runtime: Runtime, keys: Keys, dataset_id: str, version: int, field: str
) -> None:
    """The same dataset id and version as ``/factory/evaluation/datasets/{id}/versions/{n}``;
    the refusal names the field and does not echo the value."""
    port = await runtime.start_grpc(free_port())
    request = GetDatasetSnapshotRequest(dataset_id=dataset_id, version=version)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await LearningStub(channel).GetDatasetSnapshot(request, metadata=bearer(keys.a))
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    details = refused.value.details() or ""
    assert details.startswith(f"{field}:"), details
    assert len(details) < 300


EDGES = ["0001-01-01T00:00:00Z", "0001-01-01T00:00:00-23:59", "9999-12-31T23:59:59.999999Z",
         "9999-12-31T23:59:59+23:59"]  # fmt: skip
OWN_IDS = ("runId", "driftId", "candidateId", "evaluationId")


@pytest.mark.parametrize("edge", EDGES)
async def test_an_instant_at_the_edges_of_years_one_to_9999_is_applied_and_nothing_parks(
    live: Runtime, client: httpx.AsyncClient, keys: Keys, edge: str
) -> None:
    """What the door takes, the readers and the rules hold: every neighbour event type at the
    first and the last instant, then the proposal generator over them (SPEC C42)."""
    n = uuid.uuid4().hex[:8]
    events = {
        RUN: run_completed(runId=f"r-{n}", completedAt=edge),
        DRIFT: drift(detectedAt=edge),
        "factory.artifacts.v1.ArtifactValidated": {
            "artifactRef": "urn:a", "validator": "v", "outcome": "failed", "validatedAt": edge},
        "factory.memory.v1.SkillCandidateProposed": {
            "candidateId": f"c-{n}", "skillId": "s", "reinforcements": 3, "proposedAt": edge},
        "factory.quality.v1.EvaluationCompleted": {
            "evaluationId": f"e-{n}", "targetAssetId": "agent-42", "passed": False,
            "completedAt": edge},
    }  # fmt: skip
    for i in range(3):  # three of each: enough evidence for a proposal on each target
        for kind, data in events.items():
            unique = {key: f"{value}-{i}" if key in OWN_IDS else value
                      for key, value in data.items()}  # fmt: skip
            answer = await post_event(client, cloudevent(kind, unique, f"{kind}-{n}-{i}"))
            assert answer.status_code == 201, answer.text
    report = await generator(live).run(ORDER)
    # on agent-42 (drifts, evaluations), on skill s, and the drifts' re-evaluation (C40)
    assert len(report.raised) == 3, report
    await nothing_parked(live, client)


async def test_a_report_message_of_zero_width_characters_is_refused(
    client: httpx.AsyncClient,
) -> None:
    for blank in ("\u200b", " \ufeff\u2060 "):
        answer = await client.post("/factory/reports", json={"category": "bug", "message": blank})
        assert (answer.status_code, answer.json()["field"]) == (422, "message"), answer.text


async def test_an_id_of_megabytes_in_a_path_is_never_sent_back_whole(
    client: httpx.AsyncClient,
) -> None:
    """An unknown charter line and an unknown artifact answered 404 with the id twice in the
    body, and a run's and an agent's appraisal answered 200 with it: a path of 60,000
    characters came back as 120,000. An id longer than any the service holds is refused
    naming its path parameter, and an error names at most 200 characters of one."""
    long = "i" * 60_000
    for path in (f"/factory/appraisal/lines/{long}", f"/factory/artifacts/{long}"):
        answer = await client.get(path)
        assert answer.status_code in (404, 422), answer.text[:300]
        assert len(answer.text) < 2_000, (path[:40], answer.text[:300])
    for path, field in (
        (f"/factory/appraisal/runs/{long}", "run_id"),
        (f"/factory/appraisal/agents/{long}", "agent"),
        (f"/factory/artifacts/{long}", "ref"),
    ):
        answer = await client.get(path)
        assert (answer.status_code, answer.json()["field"]) == (422, field), answer.text[:300]
        assert len(answer.text) < 2_000, (path[:40], answer.text[:300])
    line = await client.get(f"/factory/appraisal/lines/{long[:600]}")
    assert line.status_code == 404, line.text[:300]
    assert line.json()["lineId"] == f"{'i' * 200}… (600 characters)"
