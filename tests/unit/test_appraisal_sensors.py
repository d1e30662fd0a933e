"""The charter's sensors as SPEC M09 names them (decisions D35), their five reading states
(M20) and the doctor's finding over the last ten runs."""

from datetime import UTC, datetime, timedelta

import pytest

from contracts.errors import Refused
from contracts.neighbours import RunCounters
from services.appraisal.charter import parse_charter
from services.appraisal.doctor import RUNS, RunSnapshot, findings, snapshot_sample
from services.appraisal.readings import ReadingState, Sample, reading
from services.appraisal.setpoints import RETIRED, UNITS, SensorKind, Unit

NOW = datetime(2026, 12, 2, 12, tzinfo=UTC)


def one_line(kind: str, setpoint: str) -> str:
    return (
        f'[[line]]\nid = "l"\ntext = "t"\nsensor = {{ kind = "{kind}", setpoint = {setpoint} }}\n'
    )


def test_the_closed_set_is_the_spec_s_five_with_their_units() -> None:  # M09
    assert {kind.value: UNITS[kind] for kind in SensorKind} == {
        "outbox_waiting": Unit.number,
        "outbox_age": Unit.duration,
        "question_latency": Unit.duration,
        "request_closure": Unit.duration,
        "intervention_rate": Unit.rate,
    }


@pytest.mark.parametrize(
    ("old", "spec"),
    [("inbox_waiting", "request_closure"), ("inbox_age", "request_closure"),
     ("proposal_wait", "question_latency"), ("eval_fail_rate", "intervention_rate")],
)  # fmt: skip
def test_a_retired_kind_is_refused_naming_the_spec_kind(old: str, spec: str) -> None:  # M10
    with pytest.raises(Refused) as refused:
        parse_charter(one_line(old, '"2d"'))
    assert f"'{spec}'" in refused.value.message
    assert refused.value.details["field"] == "line[1].sensor.kind"
    assert RETIRED[old].value == spec


@pytest.mark.parametrize(
    ("kind", "good", "bad"),
    [("outbox_waiting", "3", '"2d"'), ("outbox_age", '"24h"', "3"),
     ("question_latency", '"1d12h"', '"20%"'), ("request_closure", '"2d"', "0.5"),
     ("intervention_rate", '"20%"', '"2d"')],
)  # fmt: skip
def test_each_kind_takes_its_own_unit_and_refuses_another(kind: str, good: str, bad: str) -> None:
    assert parse_charter(one_line(kind, good)).lines[0].sensor is not None  # M12
    with pytest.raises(Refused):  # M10: the wrong unit refuses the whole file
        parse_charter(one_line(kind, bad))


def sensor(kind: str, setpoint: str):  # type: ignore[no-untyped-def]
    line = parse_charter(one_line(kind, setpoint)).lines[0]
    assert line.sensor is not None
    return line.sensor


@pytest.mark.parametrize(
    ("kind", "setpoint", "sample", "state", "within"),
    [
        ("outbox_age", '"1d"', Sample(readable=False), ReadingState.unreadable, None),
        ("outbox_age", '"1d"', Sample(deferred=True), ReadingState.deferred, None),
        ("outbox_age", '"1d"', Sample(waiting=0), ReadingState.nothing_waiting, None),
        ("intervention_rate", '"20%"', Sample(runs=4, hits=0), ReadingState.too_little_evidence,
         None),
        ("outbox_age", '"1d"', Sample(waiting=2, oldest_wait=90_000), ReadingState.observed, False),
        ("outbox_waiting", "3", Sample(waiting=3), ReadingState.observed, True),
        ("intervention_rate", '"20%"', Sample(runs=10, hits=1), ReadingState.observed, True),
    ],
)  # fmt: skip
def test_five_reading_states_and_missing_is_never_within(
    kind: str, setpoint: str, sample: Sample, state: ReadingState, within: bool | None
) -> None:  # M20
    got = reading(sensor(kind, setpoint), sample)
    assert (got.state, got.within) == (state, within)
    if state is not ReadingState.observed:
        assert got.value is None  # never zero


def run(pending: int | None, waited: timedelta | None, at: datetime = NOW) -> RunSnapshot:
    since = None if waited is None else at - waited
    counters = RunCounters(pendingDrafts=pending, oldestPendingDraftAt=since)
    return RunSnapshot(at, counters)


AGE_CHARTER = parse_charter(one_line("outbox_age", '"1h"'))


def test_a_line_past_its_setpoint_on_each_of_the_last_ten_runs_is_a_doctor_finding() -> None:
    late = [run(1, timedelta(hours=3), NOW - timedelta(hours=i)) for i in range(RUNS)]
    (said,) = findings(AGE_CHARTER, late)
    assert "'l'" in said
    assert "each of the last 10 runs" in said
    assert "the debt is real" in said
    assert "wrong unit" in said


@pytest.mark.parametrize(
    "runs",
    [
        [run(1, timedelta(hours=3))] * (RUNS - 1),  # fewer than ten
        [run(1, timedelta(hours=3))] * (RUNS - 1) + [run(0, None)],  # one had nothing waiting
        [run(1, timedelta(hours=3))] * (RUNS - 1) + [RunSnapshot(NOW, None)],  # not measured
        [run(1, timedelta(minutes=3))] + [run(1, timedelta(hours=3))] * (RUNS - 1),
    ],
)
def test_no_finding_without_ten_runs_all_past_it(runs: list[RunSnapshot]) -> None:
    assert findings(AGE_CHARTER, runs) == []


def test_a_run_s_own_snapshot_defers_the_stores_it_does_not_scan() -> None:  # M20
    for kind in (SensorKind.request_closure, SensorKind.intervention_rate):
        assert snapshot_sample(kind, run(1, timedelta(hours=1))).deferred
    rate = parse_charter(one_line("request_closure", '"1h"'))
    assert findings(rate, [run(1, timedelta(hours=3))] * RUNS) == []
