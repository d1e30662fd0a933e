"""The demo's steps, in the order the two weeks happened. Every write goes through the
service's own HTTP routes (the same input rules, role rules and handlers as any client) as
the person who did it, with an Idempotency-Key naming the step, so ids come out the same on
every fresh store (decisions D68). The night, the proposals and the digest are the
scheduler's own orders, given the demo's time.

A step is ``(what it says on the progress bar, how many ticks, the coroutine)``."""

import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import httpx

from contracts.neighbours import EvaluationCompleted
from services.bus.command_bus import CommandBus
from services.bus.issued import Issued
from services.processes.demo.cast import (
    AGENTS,
    DIGEST_WEEK,
    NIGHT_DATE,
    OPERATOR,
    ORIGIN,
    REVIEWER,
    TENANT,
    Clock,
    Person,
)
from services.processes.demo.texts import (
    CHARTER,
    FEEDBACK,
    PLAIN_REPORTS,
    REVIEWS,
    WRONG_ANSWERS,
    WrongAnswer,
)
from services.scheduling.orders import BuildDigest, Order, PlanNight, RaiseProposals

DATASET = "agent:" + AGENTS[1].path  # the billing agent's tasks


class DemoRefused(Exception):
    """A route answered something other than success: the demo stops and says which."""


@dataclass
class Demo:
    """What the steps share: the client of the in-process app, each person's key, the clock,
    the bus (for a neighbour's events), the scheduler's hand, and what earlier steps made."""

    client: httpx.AsyncClient
    keys: dict[str, str]
    clock: Clock
    bus: CommandBus
    carry_out: Callable[[Order], Awaitable[bool]]
    caught_up: Callable[[], Awaitable[None]]
    reports: dict[str, str]
    cases: dict[str, str]

    async def call(
        self, person: Person, method: str, path: str, key: str | None = None, **kw: Any
    ) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {self.keys[person.subject]}"}
        if key is not None:
            headers["Idempotency-Key"] = f"demo/{key}"
        answer = await self.client.request(method, path, headers=headers, **kw)
        if answer.status_code >= 300:
            raise DemoRefused(f"{method} {path} as {person.subject}: {answer.text}")
        return dict(answer.json()) if answer.content else {}


async def register_agents(demo: Demo) -> None:
    demo.clock.day(0, -60)
    for agent in AGENTS:
        body = {"maintainers": [agent.maintainer.subject], "repository": agent.repository}
        await demo.call(OPERATOR, "PUT", f"/factory/agents/{agent.path}", json=body)


async def write_charter(demo: Demo) -> None:
    demo.clock.day(0, -30)
    headers = {
        "Authorization": f"Bearer {demo.keys[OPERATOR.subject]}",
        "Content-Type": "application/toml",
    }
    answer = await demo.client.put("/factory/appraisal/charter", content=CHARTER, headers=headers)
    if answer.status_code >= 300:
        raise DemoRefused(f"PUT /factory/appraisal/charter: {answer.text}")


async def store_text(demo: Demo, person: Person, text: str) -> str:
    headers = {
        "Authorization": f"Bearer {demo.keys[person.subject]}",
        "Content-Type": "text/plain; charset=utf-8",
    }
    answer = await demo.client.post("/factory/artifacts", content=text.encode(), headers=headers)
    if answer.status_code >= 300:
        raise DemoRefused(f"POST /factory/artifacts: {answer.text}")
    return str(answer.json()["ref"])


async def give_feedback(demo: Demo) -> None:
    for n, (day, giver, agent, kind, rating, words) in enumerate(FEEDBACK):
        demo.clock.day(day, 60 + n)
        body: dict[str, Any] = {
            "projectId": "agentic-office",
            "subjectKind": "run",
            "subjectRef": f"run-{agent.path.rsplit('/', 1)[-1].lower()}-{day:02d}-{n}",
            "kind": kind,
        }
        if rating is not None:
            body["rating"] = rating
        if words is not None:
            ref = await store_text(demo, giver, words)
            body["correctedArtifactRef" if kind == "correction" else "commentRef"] = ref
        if rating == 5:
            body["serves"] = ["charter:grounded"]
        await demo.call(giver, "POST", "/factory/feedback", key=f"feedback/{n}", json=body)


def wrong_answer_facts(report: WrongAnswer) -> dict[str, Any]:
    thread = f"{report.reporter.subject}/_Thread/{(ORIGIN + timedelta(report.day)):%Y-%m-%d}"
    calls = [] if report.looked is None else [
        {"name": "Get", "arguments": report.agent.node, "result": report.looked}
    ]  # fmt: skip
    facts: dict[str, Any] = {
        "thread": thread,
        "messageRef": f"{thread}/{report.key}",
        "prompt": report.prompt,
        "reply": {
            "agentName": report.agent.path,
            "modelName": "standin-1",
            "harness": "native",
            "toolCalls": calls,
            "text": report.reply,
        },
        "account": report.account,
        "expected": report.expected,
        "evidence": {"node": report.agent.node, "readable": report.readable},
    }
    if report.kind is not None:
        facts["kind"] = report.kind
    return facts


async def file_reports(demo: Demo) -> None:
    for report in WRONG_ANSWERS:
        demo.clock.day(report.day, 120)
        drafted = await demo.call(
            report.reporter, "POST", "/factory/reports/wrong-answer",
            key=f"report/{report.key}", json=wrong_answer_facts(report),
        )  # fmt: skip
        report_id = str(drafted["reportId"])
        demo.clock.day(report.day, 125)
        await demo.call(report.reporter, "POST", f"/factory/reports/{report_id}/submit")
        demo.reports[report.key] = report_id
    for plain in PLAIN_REPORTS:
        demo.clock.day(plain.day, 180)
        body = {"category": plain.category, "message": plain.message}
        drafted = await demo.call(
            plain.reporter, "POST", "/factory/reports", key=f"report/{plain.key}", json=body
        )
        report_id = str(drafted["reportId"])
        demo.clock.day(plain.day, 182)
        await demo.call(plain.reporter, "POST", f"/factory/reports/{report_id}/submit")
        demo.reports[plain.key] = report_id


async def review_reports(demo: Demo) -> None:
    for review in REVIEWS:
        for n, step in enumerate(review.steps):
            demo.clock.day(review.day + n, 240)
            path = f"/factory/reports/{demo.reports[review.key]}/review"
            await demo.call(REVIEWER, "POST", path, json=step)


async def lift_and_confirm_cases(demo: Demo) -> None:
    """Each lifted report's maintainer makes it a case and confirms it, so the night runs it."""
    for report in WRONG_ANSWERS:
        if not report.lift:
            continue
        maintainer = report.agent.maintainer
        demo.clock.day(report.day + 1, 30)
        lifted = f"/factory/reports/{demo.reports[report.key]}/lift"
        case_id = str((await demo.call(maintainer, "POST", lifted))["caseId"])
        demo.cases[report.key] = case_id
        demo.clock.day(report.day + 1, 40)
        path = f"/factory/evals/cases/{case_id}/confirm"
        await demo.call(maintainer, "POST", path, json={"confirmed": True})


async def run_cases_by_hand(demo: Demo) -> None:
    """After the night, each maintainer presses Run on their cases (three conversations each,
    against the stand-in agent). Last, because a run's id is the service's own: nothing
    derived before it (the proposals' ids, the digest) depends on it."""
    for report in WRONG_ANSWERS:
        if report.key in demo.cases:
            path = f"/factory/evals/cases/{demo.cases[report.key]}/runs"
            await demo.call(report.agent.maintainer, "POST", path, json={"conversations": 3})


async def curate_dataset(demo: Demo) -> None:
    """The billing agent's dataset: three tasks published as version 1, a fourth added and
    published as version 2."""
    tasks = [
        ("expense-limit", "Up to which amount may a team lead approve an expense claim?",
         "CHF 300; above that the CFO signs."),
        ("payroll-december", "When is the December 2026 salary paid?", "On 20 December."),
        ("reminder-first", "Draft a first reminder for an overdue invoice.",
         "A polite reminder that offers help and names the invoice and its due date."),
        ("vat-rate", "Which VAT rate applies to our consulting invoices?", "8.1 %."),
    ]  # fmt: skip
    for n, (task_id, asked, expected) in enumerate(tasks):
        demo.clock.day(12 + n // 3, 300 + n)
        body = {
            "taskId": task_id,
            "inputRef": await store_text(demo, OPERATOR, asked),
            "expectedRef": await store_text(demo, OPERATOR, expected),
            "scoringRule": "match-expected",
        }
        await demo.call(OPERATOR, "POST", f"/factory/evaluation/datasets/{DATASET}/tasks",
                        json=body)  # fmt: skip
        if n in (2, 3):  # after the third task, and after the fourth
            await demo.caught_up()
            await demo.call(
                OPERATOR, "POST", f"/factory/evaluation/datasets/{DATASET}/snapshot",
                key=f"snapshot/{n}",
            )  # fmt: skip


async def failed_evaluations(demo: Demo) -> None:
    """The evaluation suite's verdicts on the billing agent (a neighbour's events, as the
    Kafka door hands them to the bus): three failed gates, the evidence a proposal needs."""
    for n in range(3):
        at = demo.clock.day(9 + 2 * n, 420)
        event = EvaluationCompleted.model_validate({
            "evaluationId": f"eval-billing-{n + 1}",
            "targetAssetId": AGENTS[1].path,
            "targetVersion": f"1.{n + 3}",
            "datasetId": DATASET,
            "passed": False,
            "gates": [{"name": "expense-limits", "passed": False, "metric": "exact-match",
                       "value": 0.4 + n / 20, "threshold": 0.9}],
            "completedAt": at.isoformat(),
        })  # fmt: skip
        digest = hashlib.sha256(event.model_dump_json().encode()).hexdigest()[:16]
        await demo.bus.execute(
            Issued(
                event,
                TENANT,
                "evaluation-suite",
                f"demo/evaluation/{n}/{digest}",
                at,
                service=True,
                roles=frozenset({"Operator"}),
            )
        )


async def night_proposals_digest(demo: Demo) -> None:
    """What the scheduler orders after the two weeks: the night of the following Monday, the
    day's proposals, the digest of the second week."""
    await demo.caught_up()
    night = ORIGIN.replace(hour=2) + timedelta(days=14)
    demo.clock.at = night
    await demo.carry_out(PlanNight(NIGHT_DATE, night))
    await demo.carry_out(RaiseProposals(NIGHT_DATE, night.replace(hour=6)))
    await demo.caught_up()
    demo.clock.at = night.replace(hour=7)
    await demo.carry_out(BuildDigest(DIGEST_WEEK, night.replace(hour=7)))


async def maintainer_picks_up(demo: Demo) -> None:
    """The billing maintainer takes the first proposal into review."""
    await demo.caught_up()
    demo.clock.at = ORIGIN.replace(hour=9) + timedelta(days=14)
    found = await demo.call(AGENTS[1].maintainer, "GET", "/factory/learning/proposals")
    # The one the evaluation suite's failures raised, on the agent as the register names it.
    items = [p for p in found.get("items", []) if p["targetAssetId"] == AGENTS[1].path]
    if items:
        proposal = items[0]["proposalId"]
        await demo.call(AGENTS[1].maintainer, "POST",
                        f"/factory/learning/proposals/{proposal}/pick-up")  # fmt: skip


Step = tuple[str, Callable[[Demo], Awaitable[None]]]
STEPS: tuple[Step, ...] = (
    ("agents and maintainers", register_agents),
    ("the charter", write_charter),
    ("two weeks of feedback", give_feedback),
    ("reports of every kind", file_reports),
    ("the reviewer's Inbox work", review_reports),
    ("eval cases lifted and confirmed", lift_and_confirm_cases),
    ("a dataset with two versions", curate_dataset),
    ("failed evaluations", failed_evaluations),
    ("the night, the proposals, the digest", night_proposals_digest),
    ("a proposal picked up", maintainer_picks_up),
    ("eval cases run by hand against the stand-in agent", run_cases_by_hand),
)
