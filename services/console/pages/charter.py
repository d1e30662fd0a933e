"""The charter editor (a sub-page of Appraisal): the tenant's charter lines in rank order,
re-ranked by drag or by Move up / Move down (``static/charter.js``), each sensor's setpoint
edited, and saved as a TOML document through the API's own command (``WriteCharter``), so
the parse that refuses a PUT refuses the editor's save too, naming the line (SPEC M07–M15);
the refusal is shown next to that line. Order is rank (M07): the lines are written in the
order the form sends them, and no rank field exists to disagree with it.
"""

import json
import re
import uuid
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from contracts.appraisal import WriteCharter
from contracts.errors import DomainError, Refused
from services.appraisal.appraisals import sensor_samples
from services.appraisal.charter import CharterLine
from services.appraisal.readings import ReadingState, Sample, reading
from services.appraisal.reads import read_charter
from services.appraisal.setpoints import SensorKind
from services.console.console import Console, Visitor
from services.edge.problems import status_of
from services.permissions.rules import ADMIN, READ_ALL

FIELDS = ("id", "text", "kind", "setpoint")
KINDS = tuple(kind.value for kind in SensorKind)
READ_MODEL = "appraisal"
# ``line[3].sensor.setpoint`` → the input of the line's that was refused
FIELD = re.compile(r"line\[\d+\]\.(id|text|sensor\.kind|sensor\.setpoint|sensor)")
INPUTS = {"id": "id", "text": "text", "sensor.kind": "kind", "sensor": "kind"}
INPUTS["sensor.setpoint"] = "setpoint"


def toml_string(value: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's (``\\"``, ``\\\\``, ``\\n``, ``\\uXXXX``)."""
    return json.dumps(value, ensure_ascii=False)


def document_of(lines: list[dict[str, str]]) -> str:
    """The lines as the charter's TOML, in their order (which is their rank, M07). Whatever
    was typed is written as typed: judging it is the charter's parse, not the editor's."""
    parts = []
    for line in lines:
        table = f"[[line]]\nid = {toml_string(line['id'])}\ntext = {toml_string(line['text'])}\n"
        sensor = [
            f"{key} = {toml_string(line[name])}"
            for key, name in (("kind", "kind"), ("setpoint", "setpoint"))
            if line[name]
        ]
        if sensor:
            table += f"sensor = {{ {', '.join(sensor)} }}\n"
        parts.append(table)
    return "\n".join(parts)


def posted_lines(form: Any) -> list[dict[str, str]]:
    """The lines the form sent, in its order; one left wholly blank (the empty line offered
    for a new one) is no line."""
    columns = [[str(value) for value in form.getlist(name)] for name in FIELDS]
    if len({len(column) for column in columns}) > 1:
        raise Refused("every line sends an id, a text, a kind and a setpoint", field="body")
    lines = [dict(zip(FIELDS, values, strict=True)) for values in zip(*columns, strict=True)]
    return [
        {name: value.strip() for name, value in line.items()}
        for line in lines
        if any(value.strip() for value in line.values())
    ]


def now_reads(line: CharterLine, samples: dict[SensorKind, Sample]) -> str:
    """A sensored line's reading in words (SPEC M20): missing or sparse evidence says so and
    is never read as within its setpoint, nor as zero."""
    if line.sensor is None:
        return ""
    now = reading(line.sensor, samples.get(line.sensor.kind, Sample(readable=False)))
    shown = now.as_json(line.sensor)["shown"]
    if now.state is ReadingState.observed:
        return f"now {shown}: {'within' if now.within else 'over'} its setpoint"
    return {
        ReadingState.unreadable: "now unreadable (not zero: the store could not be read)",
        ReadingState.deferred: "not read yet",
        ReadingState.nothing_waiting: "now nothing waiting",
        ReadingState.too_little_evidence: "too little evidence to say",
    }[now.state]


def blank() -> dict[str, str]:
    return dict.fromkeys(FIELDS, "")


def charter_routes(console: Console) -> APIRouter:
    router = APIRouter(include_in_schema=False)
    http = console.http

    @router.get("/appraisal/charter")
    async def charter(request: Request, saved: str | None = None) -> Response:
        visitor = await console.visitor(request, reads=READ_ALL)
        stored = await read_charter(http.pool, visitor.principal.tenant_id)
        samples = await sensor_samples(
            http.pool, visitor.principal.tenant_id, stored.charter, http.clock()
        )
        lines = [
            {
                "id": line.id,
                "text": line.text,
                "kind": line.sensor.kind.value if line.sensor else "",
                "setpoint": line.sensor.setpoint.text if line.sensor else "",
                "reading": now_reads(line, samples),
            }
            for line in stored.charter.lines
        ]
        return editor(
            visitor, lines, findings=list(stored.charter.findings), stored=stored, saved=bool(saved)
        )

    @router.post("/appraisal/charter")
    async def save(request: Request) -> Response:
        visitor = await console.writer(request)
        lines = posted_lines(await request.form())
        try:
            outcome = await http.execute(
                WriteCharter(document=document_of(lines)), visitor.principal, str(uuid.uuid4())
            )
        except DomainError as error:
            return editor(visitor, lines, status=status_of(error), refusal=error)
        await http.read_at(READ_MODEL, http.position(outcome, visitor.principal), visitor.principal)
        return console.see_other(request, "/appraisal/charter?saved=1", visitor)

    def editor(
        visitor: Visitor,
        lines: list[dict[str, str]],
        status: int = 200,
        refusal: DomainError | None = None,
        findings: list[str] | None = None,
        stored: Any = None,
        saved: bool = False,
    ) -> Response:
        """The editor with ``lines`` as given; a refusal naming a line (its 1-based place) is
        put on that line and the input it names, any other above the form."""
        shown = [{"reading": "", **line, "error": "", "invalid": ""} for line in lines]
        general = None
        if refusal is not None:
            place = refusal.details.get("line")
            if isinstance(place, int) and 1 <= place <= len(shown):
                named = FIELD.fullmatch(str(refusal.details.get("field", "")))
                shown[place - 1]["error"] = refusal.message
                shown[place - 1]["invalid"] = INPUTS.get(named.group(1), "") if named else ""
            else:
                general = refusal.message
        return console.render(
            visitor,
            "charter.html",
            status,
            current="appraisal",
            lines=[*shown, {**blank(), "reading": "", "error": "", "invalid": ""}],
            kinds=KINDS,
            edits=visitor.holds(ADMIN),
            refusal=general,
            refused=refusal is not None,
            findings=findings or [],
            stored=stored,
            saved=saved,
        )

    return router
