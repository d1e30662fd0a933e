"""The agents the Appraisal page lists: the names the appraisal read model's facts carry, by
name, paged after a name, never another tenant's (decisions D91)."""

import uuid
from datetime import UTC, datetime
from typing import Any

from contracts.reports import DraftReport, SubmitReport
from projections.appraisal import SCHEMA, AppraisalFacts
from projections.appraisal_queries import appraised_agents
from services.bus.issued import Issued
from services.processes.bootstrap import Runtime
from services.projecting.live import ProjectionRunner

NOW = datetime.now(UTC)


async def send(runtime: Runtime, tenant: str, command: Any) -> Any:
    issued = Issued(command, tenant, "rita", uuid.uuid4().hex, NOW)
    return (await runtime.bus.execute(issued)).result


async def reported(runtime: Runtime, tenant: str, agent: str | None) -> None:
    block = "Kind: not-found" + (f"\nAgent: {agent}" if agent else "")
    draft = DraftReport(category="answer", message="It found nothing", extraContext=block)
    state = await send(runtime, tenant, draft)
    await send(runtime, tenant, SubmitReport(reportId=state.report_id))


async def test_the_agents_named_are_listed_by_name_in_pages_of_one_tenant(
    runtime: Runtime,
) -> None:
    for tenant, agent in (
        ("tenant-a", "coach"),
        ("tenant-a", "archivist"),
        ("tenant-a", "coach"),  # named twice, listed once
        ("tenant-a", None),  # a report naming no agent lists none
        ("tenant-a", "booker"),
        ("tenant-b", "aardvark"),
    ):
        await reported(runtime, tenant, agent)
    runner = ProjectionRunner(runtime.store, runtime.pool, AppraisalFacts())
    await runner.start()
    await runner.catch_up()

    pool = runtime.pool
    assert await appraised_agents(pool, "tenant-a", None, 2, SCHEMA) == ["archivist", "booker"]
    assert await appraised_agents(pool, "tenant-a", "booker", 2, SCHEMA) == ["coach"]
    assert await appraised_agents(pool, "tenant-a", "coach", 2, SCHEMA) == []
    assert await appraised_agents(pool, "tenant-b", None, 20, SCHEMA) == ["aardvark"]
    assert await appraised_agents(pool, "tenant-c", None, 20, SCHEMA) == []
