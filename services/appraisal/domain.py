"""The Charter aggregate: one per tenant, written only by a person (SPEC M07–M17).

Its events carry the parse result (lines, findings) beside the document, so readers never
parse the TOML again and a parser change never changes what a rebuild shows. A key marked
as a service's (``service: true``, which is also how an agent's key is configured) is refused:
no model authors a line of the charter.
"""

from datetime import datetime
from typing import Any, TypedDict
from uuid import UUID, uuid5

from eventsourcing.domain import Aggregate, event

from contracts.errors import NotPermitted
from services.appraisal.charter import Charter, CharterLine, Sensor
from services.appraisal.setpoints import SensorKind, Setpoint, Unit
from services.store.sealing import Personal

CHARTER_NAMESPACE = UUID("3e7a51c2-94d0-5b6f-8c21-7d4e0a9f1b36")


def charter_id_for(tenant_id: str) -> UUID:
    """A tenant has one charter: its id is derived, so writing it twice names the same one."""
    return uuid5(CHARTER_NAMESPACE, f"{tenant_id}/charter")


class StoredSensor(TypedDict):
    kind: str
    unit: str
    setpoint: str
    value: float


class StoredLine(TypedDict):
    rank: int
    id: str
    text: str
    sensor: StoredSensor | None


def stored_lines(charter: Charter) -> list[StoredLine]:
    return [
        StoredLine(
            rank=line.rank,
            id=line.id,
            text=line.text,
            sensor=None
            if line.sensor is None
            else StoredSensor(
                kind=line.sensor.kind.value,
                unit=line.sensor.setpoint.unit.value,
                setpoint=line.sensor.setpoint.text,
                value=line.sensor.setpoint.value,
            ),
        )
        for line in charter.lines
    ]


def charter_of(lines: list[Any], findings: list[Any]) -> Charter:
    """The stored parse result as a Charter, without parsing anything again."""

    def sensor_of(raw: Any) -> Sensor | None:
        if raw is None:
            return None
        setpoint = Setpoint(Unit(raw["unit"]), float(raw["value"]), str(raw["setpoint"]))
        return Sensor(SensorKind(raw["kind"]), setpoint)

    return Charter(
        tuple(
            CharterLine(int(ln["rank"]), str(ln["id"]), str(ln["text"]), sensor_of(ln["sensor"]))
            for ln in lines
        ),
        tuple(str(finding) for finding in findings),
    )


def refuse_service(by_service: bool) -> None:
    if by_service:
        raise NotPermitted(
            "only a person writes the charter: this key is a service's or an agent's",
            field="writtenBy",
        )


class TenantCharter(Aggregate):
    class Adopted(Aggregate.Created):
        personal = Personal(names={"written_by": "the charter's writer"})  # their own keys, D130

        tenant_id: str
        document: str
        lines: list[StoredLine]
        findings: list[str]
        written_by: str

    class Amended(Aggregate.Event):
        personal = Personal(names={"written_by": "the charter's writer"})  # their own keys, D130

        tenant_id: str
        document: str
        lines: list[StoredLine]
        findings: list[str]
        written_by: str

    def __init__(
        self,
        tenant_id: str,
        document: str,
        lines: list[StoredLine],
        findings: list[str],
        written_by: str,
    ) -> None:
        self.tenant_id = tenant_id
        self.document = document
        self.lines = lines
        self.findings = findings

    @classmethod
    def adopt(
        cls, charter: Charter, *, tenant_id: str, document: str, by: str, by_service: bool,
        at: datetime,
    ) -> "TenantCharter":  # fmt: skip
        refuse_service(by_service)
        return cls._create(
            cls.Adopted,
            id=charter_id_for(tenant_id),
            timestamp=at,
            tenant_id=tenant_id,
            document=document,
            lines=stored_lines(charter),
            findings=list(charter.findings),
            written_by=by,
        )

    def amend(
        self, charter: Charter, *, document: str, by: str, by_service: bool, at: datetime
    ) -> None:
        """A document the same as the current one changes nothing (a repeated PUT)."""
        refuse_service(by_service)
        if document == self.document:
            return
        self._amended(
            timestamp=at,
            tenant_id=self.tenant_id,
            document=document,
            lines=stored_lines(charter),
            findings=list(charter.findings),
            written_by=by,
        )

    @event(Amended)
    def _amended(
        self,
        tenant_id: str,
        document: str,
        lines: list[StoredLine],
        findings: list[str],
        written_by: str,
        timestamp: datetime,
    ) -> None:
        self.document = document
        self.lines = lines
        self.findings = findings
