"""HTTP routes of appraisal.

- ``PUT /factory/appraisal/charter``: the tenant's charter as a TOML body, by a person's key
  with ``factory.assets.write`` (a service's or an agent's key is refused, 403); a document
  that does not parse is a 422 naming the line (SPEC M07–M16).
- ``GET /factory/appraisal/charter``: the charter as stored, its findings and each sensored
  line's current reading in one of five states (M20); with ``minPosition``, a store whose read
  model is behind it reads ``deferred``.
- ``GET /factory/appraisal/runs/{runId}``, ``/agents/{agent}``, ``/lines/{lineId}``: the
  appraisal derived now from the recorded facts in the window (``since``/``until``); an agent's
  also carries its health counters (M47–M51). An instant that is not one in UTC, or a window
  that ends before it starts, is a 422 naming the parameter, before anything is read.
"""

from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.exceptions import RequestValidationError

from contracts.appraisal import (
    MAX_CHARTER_DOCUMENT,
    AgentAppraisal,
    CharterView,
    CharterWritten,
    LineAppraisal,
    RunAppraisal,
    WriteCharter,
)
from contracts.errors import NotFound, Refused, echoed
from contracts.goals import GoalKind, GoalRef
from services.appraisal.appraisals import appraisal_of as appraised
from services.appraisal.appraisals import charter_or_unreadable as readable_charter
from services.appraisal.appraisals import iso, sensor_samples
from services.appraisal.charter import Charter
from services.appraisal.facts import Facts
from services.appraisal.health import health
from services.appraisal.outcomes import CONTRIBUTIONS, Contribution
from services.appraisal.readings import Sample, reading
from services.appraisal.reads import (
    Scope,
    StoredCharter,
    read_charter,
)
from services.appraisal.setpoints import SensorKind
from services.appraisal.steps import read_steps
from services.edge.auth import Principal
from services.edge.bodies import media_type
from services.edge.http import Http
from services.edge.openapi import raw_body
from services.edge.parameters import IdempotencyKey, Instant, MinPosition, PathRef, command_id
from services.edge.problems import READ_ERRORS, WRITE_ERRORS, TooLarge, error_responses

READ_MODEL = "appraisal"
Since = Annotated[Instant | None, Query(description="From this instant (inclusive)")]
Until = Annotated[Instant | None, Query(description="Up to this instant (exclusive)")]
# The charter is a TOML document: taken as TOML or as the plain text it is (the README's two).
# Bytes of no declared kind (application/octet-stream) or any other type: 415 (decisions D140).
CHARTER_TYPES = ("application/toml", "text/plain")


def appraisal_routes(http: Http, table: Mapping[str, Contribution] = CONTRIBUTIONS) -> APIRouter:
    """``table`` is the contribution table the reads derive with (a parameter, so that a
    changed table reads over the same recorded history)."""
    router = APIRouter(prefix="/factory/appraisal", tags=["appraisal"])
    writer = Depends(http.scope("factory.assets.write"))
    reader = Depends(http.reading("factory.evaluation.read"))

    @router.put(
        "/charter",
        response_model=CharterWritten,
        responses={**WRITE_ERRORS, **error_responses(415)},
        openapi_extra=raw_body(*CHARTER_TYPES),
    )
    async def put_charter(
        request: Request,
        principal: Annotated[Principal, writer],
        idempotency_key: IdempotencyKey = None,
    ) -> dict[str, Any]:
        """Write the tenant's charter: a TOML document of `[[line]]` tables (`id`, `text`, an
        optional `sensor = { kind, setpoint }`), whose order is rank. For example:

            [[line]]
            id = "inbox-short"
            text = "Nobody's report waits long."
            sensor = { kind = "request_closure", setpoint = "2d" }

        Sent as `application/toml` or `text/plain`, UTF-8; another Content-Type (bytes
        sent as `application/octet-stream` too) is refused (415). With an `Idempotency-Key`,
        the same key and document answer what the first write answered and write nothing;
        another document under it is refused (409) and the first charter kept (SPEC C11).
        """
        media_type(request, CHARTER_TYPES)
        document = await read_document(request)
        outcome = await http.execute(
            WriteCharter(document=document),
            principal,
            command_id(idempotency_key),
            idempotency_key,
        )
        written = outcome.result
        return {
            "lines": written.lines,
            "findings": list(written.findings),
            "position": http.position(outcome, principal),
        }

    @router.get("/charter", response_model=CharterView, responses=READ_ERRORS)
    async def get_charter(
        principal: Annotated[Principal, reader], min_position: MinPosition = None
    ) -> dict[str, Any]:
        """The charter, its findings and each sensored line's current reading (SPEC M20)."""
        await http.read_at(READ_MODEL, min_position, principal)
        stored = await read_charter(http.pool, principal.tenant_id)
        now = http.clock()
        wanted = (
            None if min_position is None else http.positions.open(min_position, principal.tenant_id)
        )
        samples = await sensor_samples(http.pool, principal.tenant_id, stored.charter, now, wanted)
        return charter_json(stored, samples)

    async def charter_or_unreadable(tenant_id: str) -> tuple[Charter, bool]:
        return await readable_charter(http.pool, tenant_id)

    async def appraisal_of(
        principal: Principal, scope: Scope, goal: GoalRef | None = None
    ) -> tuple[dict[str, Any], Facts]:
        return await appraised(http.pool, principal.tenant_id, scope, http.clock(), table, goal)

    @router.get("/runs/{run_id}", response_model=RunAppraisal, responses=READ_ERRORS)
    async def get_run(
        run_id: PathRef,
        principal: Annotated[Principal, reader],
        min_position: MinPosition = None,
    ) -> dict[str, Any]:
        """One run's appraisal: its feedback, reports, eval verdict and counters."""
        await http.read_at(READ_MODEL, min_position, principal)
        derived, facts = await appraisal_of(principal, Scope(run_id=run_id))
        steps = [reading.as_json() for run in facts.runs for reading in read_steps(run.steps)]
        return {"runId": run_id} | derived | {"steps": steps}

    @router.get("/agents/{agent:name}", response_model=AgentAppraisal, responses=READ_ERRORS)
    async def get_agent(
        agent: PathRef,
        principal: Annotated[Principal, reader],
        since: Since = None,
        until: Until = None,
        min_position: MinPosition = None,
    ) -> dict[str, Any]:
        """An agent's appraisal over the window, with its health counters (M47–M51)."""
        in_order(since, until)
        await http.read_at(READ_MODEL, min_position, principal)
        derived, facts = await appraisal_of(principal, Scope(agent=agent, since=since, until=until))
        return {"agent": agent} | derived | {"health": health(facts.runs).as_json()}

    @router.get("/lines/{line_id}", response_model=LineAppraisal, responses=READ_ERRORS)
    async def get_line(
        line_id: str,
        principal: Annotated[Principal, reader],
        since: Since = None,
        until: Until = None,
        min_position: MinPosition = None,
    ) -> dict[str, Any]:
        """What counted against one charter line in the window (M18, M19), and its reading."""
        in_order(since, until)
        await http.read_at(READ_MODEL, min_position, principal)
        charter, readable = await charter_or_unreadable(principal.tenant_id)
        line = charter.line(line_id)
        if readable and line is None:
            raise NotFound(f"the charter has no line {echoed(line_id)!r}", lineId=echoed(line_id))
        scope = Scope(since=since, until=until)
        derived, _ = await appraisal_of(principal, scope, GoalRef(GoalKind.charter, line_id))
        body = {"lineId": line_id} | derived
        if line is not None and line.sensor is not None:
            samples = await sensor_samples(http.pool, principal.tenant_id, charter, http.clock())
            body["reading"] = reading(line.sensor, samples[line.sensor.kind]).as_json(line.sensor)
        return body

    return router


def in_order(since: datetime | None, until: datetime | None) -> None:
    """A window that ends before it starts is a mistake, not an empty appraisal (the SPEC's
    M rules say nothing of the window; strict with ourselves, STYLE 12). It is answered as any
    invalid query parameter is (422 ``invalid``, naming ``since``). ``since == until`` is an
    empty window, as written."""
    if since is not None and until is not None and since > until:
        message = f"since ({since.isoformat()}) is after until ({until.isoformat()})"
        raise RequestValidationError(
            [{"type": "value_error", "loc": ("query", "since"), "msg": message, "input": None}]
        )


async def read_document(request: Request) -> str:
    """The charter's bytes as text; over its bound is 413, as any body over its bound is."""
    raw = await request.body()
    if len(raw) > MAX_CHARTER_DOCUMENT:
        raise TooLarge(MAX_CHARTER_DOCUMENT)
    try:
        document = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused("the charter must be UTF-8 text", field="body") from None
    if "\x00" in document:
        raise Refused("text must not contain NUL characters", field="body")
    return document


def charter_json(stored: StoredCharter, samples: Mapping[SensorKind, Sample]) -> dict[str, Any]:
    lines = []
    for line in stored.charter.lines:
        shown: dict[str, Any] = {"rank": line.rank, "id": line.id, "text": line.text}
        shown["sensor"] = None
        if line.sensor is not None:
            sample = samples.get(line.sensor.kind, Sample(readable=False))
            shown["sensor"] = reading(line.sensor, sample).as_json(line.sensor)
        lines.append(shown)
    return {
        "document": stored.document,
        "lines": lines,
        "findings": list(stored.charter.findings),
        "writtenBy": stored.written_by,
        "writtenAt": iso(stored.written_at),
    }
