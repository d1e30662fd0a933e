"""The Charter aggregate (a person writes it, the parse stored once) and a sensored line's
reading in its five states (SPEC M16, M20)."""

from datetime import UTC, datetime

import pytest

from contracts.appraisal import WriteCharter
from contracts.errors import NotPermitted
from contracts.neighbours import RunCompleted
from projections.appraisal import run_of
from services.appraisal.charter import Sensor, parse_charter
from services.appraisal.domain import TenantCharter, charter_id_for, charter_of
from services.appraisal.readings import MIN_EVIDENCE, ReadingState, Sample, reading
from services.appraisal.setpoints import SensorKind, Unit, parse_setpoint

AT = datetime(2026, 11, 30, 8, tzinfo=UTC)
DOCUMENT = (
    '[[line]]\nid = "grounded"\ntext = "Answers are grounded."\n'
    '[[line]]\nid = "queue"\ntext = "The queue stays short."\n'
    'sensor = { kind = "outbox_waiting", setpoint = "5" }\n'
)


def sensor(kind: SensorKind, unit: Unit, setpoint: object) -> Sensor:
    return Sensor(kind, parse_setpoint(unit, setpoint))


AGE = sensor(SensorKind.request_closure, Unit.duration, "2d")
WAITING = sensor(SensorKind.outbox_waiting, Unit.number, 5)
FAILS = sensor(SensorKind.intervention_rate, Unit.rate, "20%")


@pytest.mark.parametrize(
    ("watching", "sample", "state", "within"),
    [
        (AGE, Sample(readable=False), ReadingState.unreadable, None),
        (FAILS, Sample(deferred=True), ReadingState.deferred, None),
        (AGE, Sample(waiting=0), ReadingState.nothing_waiting, None),
        (WAITING, Sample(waiting=0), ReadingState.nothing_waiting, None),
        (FAILS, Sample(runs=MIN_EVIDENCE - 1, hits=0), ReadingState.too_little_evidence, None),
        (AGE, Sample(waiting=2, oldest_wait=3 * 86_400), ReadingState.observed, False),
        (AGE, Sample(waiting=2, oldest_wait=3600), ReadingState.observed, True),
        (AGE, Sample(waiting=2, oldest_wait=None), ReadingState.unreadable, None),
        (WAITING, Sample(waiting=6), ReadingState.observed, False),
        (WAITING, Sample(waiting=5), ReadingState.observed, True),
        (FAILS, Sample(runs=10, hits=3), ReadingState.observed, False),
        (FAILS, Sample(runs=10, hits=2), ReadingState.observed, True),
    ],
)
def test_a_reading_is_in_one_of_five_states_and_missing_is_never_within(
    watching: Sensor, sample: Sample, state: ReadingState, within: bool | None
) -> None:
    shown = reading(watching, sample)
    assert shown.state is state  # M20
    assert shown.within is within
    if state is not ReadingState.observed:
        assert shown.value is None  # never zero


def test_an_observed_reading_is_shown_in_its_unit() -> None:
    shown = reading(AGE, Sample(waiting=1, oldest_wait=3 * 86_400 + 16 * 3600)).as_json(AGE)
    assert shown["shown"] == "3d 16h"
    assert shown["setpoint"] == "2d"


def test_a_person_adopts_the_charter_and_the_parse_is_stored_once() -> None:
    charter = parse_charter(DOCUMENT)
    adopted = TenantCharter.adopt(
        charter, tenant_id="t1", document=DOCUMENT, by="alice", by_service=False, at=AT
    )
    assert adopted.id == charter_id_for("t1")
    (event,) = adopted.collect_events()
    assert isinstance(event, TenantCharter.Adopted)
    assert charter_of(event.lines, event.findings) == charter  # read back, never re-parsed


def test_a_service_may_not_write_the_charter() -> None:
    charter = parse_charter(DOCUMENT)
    with pytest.raises(NotPermitted):
        TenantCharter.adopt(
            charter, tenant_id="t1", document=DOCUMENT, by="svc", by_service=True, at=AT
        )


def test_the_same_document_again_amends_nothing() -> None:
    charter = parse_charter(DOCUMENT)
    adopted = TenantCharter.adopt(
        charter, tenant_id="t1", document=DOCUMENT, by="alice", by_service=False, at=AT
    )
    adopted.collect_events()
    adopted.amend(charter, document=DOCUMENT, by="alice", by_service=False, at=AT)
    assert adopted.collect_events() == []
    shorter = DOCUMENT.split('[[line]]\nid = "queue"')[0]
    adopted.amend(parse_charter(shorter), document=shorter, by="anna", by_service=False, at=AT)
    (amended,) = adopted.collect_events()
    assert [line["id"] for line in amended.lines] == ["grounded"]  # type: ignore[attr-defined]


def test_the_charter_command_is_strict() -> None:
    with pytest.raises(ValueError, match="extra"):
        WriteCharter.model_validate({"document": "", "priority": 1})


class Recorded:
    def __init__(self, run: object) -> None:
        self.run = run


def test_a_recorded_run_is_read_tolerantly() -> None:
    model = RunCompleted.model_validate(
        {"runId": "r1", "agentId": "a", "outcome": "failed", "inputRef": "in",
         "completedAt": "2026-11-30T08:00:00Z", "somethingNew": 1}
    )  # fmt: skip
    assert run_of(Recorded(model)) == model
    assert run_of(Recorded(model.model_dump(mode="json", by_alias=True))) == model
    assert run_of(Recorded({"runId": "r1"})) is None  # not a RunCompleted: no run
    assert run_of(object()) is None
