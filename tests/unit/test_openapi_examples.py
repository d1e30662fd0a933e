"""Every success in ``/openapi.json`` shows a real answer (every response model comes
with examples), and every example is one the service could answer: valid for its model, valid for
the schema the document publishes, with ids, times and positions as the API writes them.

The document is the one the service serves (``Runtime.app()``), built without servers:
generating it reads only what the routes declare, so the store, the pool and the bus are
never called and stand absent here.
"""

import base64
import json
import os
import re
import uuid
from collections.abc import Iterator
from dataclasses import asdict
from datetime import date, datetime
from types import SimpleNamespace
from typing import Any

import jsonschema_rs
import pytest
from pydantic import BaseModel

from contracts import (
    answers,
    digest_examples,
    digests,
    eval_examples,
    feedback_examples,
    night_examples,
    nights,
    report_examples,
    topics,
)
from contracts import example_story as story
from contracts.nights import NightLine
from contracts.reports import ComposeWrongAnswer
from contracts.runners import RunnerKey
from contracts.weeks import due_at, week_of
from projections.nights import summary_json
from services.appraisal.weekly import reports_only_line
from services.bus.issued import Issued
from services.digests.build import CaseFact, ReportFact, build
from services.digests.builder import PAGE_BOUND, digest_url
from services.digests.domain import Digest, digest_id_for
from services.digests.published import digest_posted
from services.edge import openapi
from services.edge.auth import KeyRing
from services.edge.parameters import rfc3339
from services.edge.positions import PositionSeal
from services.evals.domain import case_ref
from services.evals.scoring import ThreadScore, summarize
from services.nightly.catalogue import EU, Catalogue
from services.nightly.domain import Night, night_run_id
from services.nightly.planning import Candidate, plan_night
from services.nightly.runner import NightlyRunner
from services.nightly.settings import NightlySettings
from services.permissions.agent_register import AgentRegistration
from services.processes.bootstrap import Runtime
from services.processes.settings import Settings
from services.reports.wrong_answer import compose_report
from services.store.event_store import EventStore

SCHEMAS = "#/components/schemas/"
BASE64URL = re.compile(r"[A-Za-z0-9_-]+")
# The ids the service makes (a case's source is a report's id); a tenant or project is named.
MADE_IDS = frozenset({"feedbackId", "reportId", "caseId", "runId", "source"})


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    runtime = Runtime(Settings(), "", None, None, None, None, KeyRing([]))
    runtime.positions = PositionSeal(os.urandom(32))
    served: dict[str, Any] = runtime.app().openapi()
    return served


def json_successes(document: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each 2xx answer with a JSON body: (``METHOD /path status``, its media type object)."""
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            for status, answer in operation["responses"].items():
                content = answer.get("content", {}).get("application/json")
                if status.startswith("2") and content is not None:
                    yield f"{method.upper()} {path} {status}", content


def answer_models() -> list[type[answers.Answer]]:
    """Every answer model, wherever its context declares it (``contracts/answers.py``,
    ``contracts/nights.py``, ``contracts/digests.py``, ...): what ``services/edge/openapi.py``
    attaches examples from."""
    return list(openapi.answer_models().values())


def examples_of(model: type[BaseModel]) -> list[dict[str, Any]]:
    shown: list[dict[str, Any]] = model.model_json_schema(mode="serialization").get("examples", [])
    return shown


def validator(document: dict[str, Any], schema: dict[str, Any]) -> Any:
    """A 2020-12 validator of ``schema`` (OpenAPI 3.1's dialect) with the document's components
    to resolve references in, formats checked (date-time, uuid)."""
    root = {**schema, "components": document["components"]}
    return jsonschema_rs.Draft202012Validator(root, validate_formats=True)


def model_named(name: str) -> type[answers.Answer]:
    (model,) = [model for model in answer_models() if model.__name__ == name]
    return model


def test_each_operation_names_each_of_its_tags_once(document: dict[str, Any]) -> None:
    """A tag given by a router and again by the router it is included in is listed twice,
    and an API browser then shows the operation twice under the same heading."""
    repeated = [
        f"{method.upper()} {path}: {operation['tags']}"
        for path, methods in document["paths"].items()
        for method, operation in methods.items()
        if len(set(operation.get("tags", []))) != len(operation.get("tags", []))
    ]
    assert repeated == []


def test_every_success_with_a_json_body_shows_an_example(document: dict[str, Any]) -> None:
    successes = dict(json_successes(document))
    assert len(successes) >= 20  # every operation's 2xx answers, replays included
    missing = [where for where, content in successes.items() if "example" not in content]
    assert not missing, missing


def test_each_success_shows_the_first_example_of_the_model_it_answers(
    document: dict[str, Any],
) -> None:
    """The document and the models cannot drift: the example is read from the model."""
    for where, content in json_successes(document):
        ref = content["schema"]["$ref"]
        assert ref.startswith(SCHEMAS), where
        model = model_named(ref.removeprefix(SCHEMAS))
        assert content["example"] == examples_of(model)[0], where


def test_each_example_is_an_answer_of_its_model_exactly() -> None:
    """Read by alias, written back by alias, the example is unchanged: nothing coerced,
    nothing defaulted, no field missing or extra (``extra="forbid"``)."""
    shown = 0
    for model in answer_models():
        for example in examples_of(model):
            answer = model.model_validate(example, strict=True)
            assert answer.model_dump(mode="json", by_alias=True) == example, model.__name__
            shown += 1
    assert shown >= 19


def test_an_answer_model_does_not_show_the_example_of_the_model_it_extends() -> None:
    """A subclass inherits its parent's config, examples included: it must name its own."""
    for model in answer_models():
        for parent in model.__mro__[1:]:
            if parent is not answers.Answer and issubclass(parent, answers.Answer):
                own, inherited = examples_of(model), examples_of(parent)
                assert not own or own != inherited, (model.__name__, parent.__name__)


def test_each_example_conforms_to_the_schema_the_document_publishes(
    document: dict[str, Any],
) -> None:
    """What a client validates against: each response's example against the response's
    schema, and every component's examples against the component (FastAPI drops the nulls
    of examples; the document restores them, or these would miss required fields)."""
    failures = []
    for where, content in json_successes(document):
        for error in validator(document, content["schema"]).iter_errors(content["example"]):
            failures.append(f"{where}: {error}")
    for name, schema in document["components"]["schemas"].items():
        check = validator(document, {"$ref": SCHEMAS + name})
        for example in schema.get("examples", []):
            failures += [f"{name}: {error}" for error in check.iter_errors(example)]
    assert not failures, "\n\n".join(failures)


def test_a_broken_example_would_be_caught(document: dict[str, Any]) -> None:
    """The schema checks above can fail: a time without its offset, an id that is no UUID."""
    check = validator(document, {"$ref": SCHEMAS + "FeedbackPage"})
    assert check.is_valid(feedback_examples.FEEDBACK_PAGE)
    (item, *_) = feedback_examples.FEEDBACK_PAGE["items"]
    broken = {**feedback_examples.FEEDBACK_PAGE, "items": [{**item, "givenAt": "30.11.2026 08:14"}]}
    assert not check.is_valid(broken)
    written = validator(document, {"$ref": SCHEMAS + "FeedbackWritten"})
    assert not written.is_valid({**feedback_examples.FEEDBACK_WRITTEN, "feedbackId": "feedback-1"})


def values(example: Any, key: str = "") -> Iterator[tuple[str, Any]]:
    """Every (key, value) in an example, nested ones included."""
    if isinstance(example, dict):
        for name, value in example.items():
            yield name, value
            yield from values(value, name)
    elif isinstance(example, list):
        for item in example:
            yield from values(item, key)


def test_examples_write_ids_times_and_positions_as_the_api_does() -> None:
    """Ids the service makes are UUIDs, times RFC 3339 with their offset (as
    ``?submittedBefore=`` reads them), positions and cursors opaque tokens shaped as
    ``services/edge/positions.py`` seals them (never a log number)."""
    sealed = PositionSeal(os.urandom(32)).seal(123_456, story.TENANT)
    checked = {"id": 0, "time": 0, "position": 0}
    for model in answer_models():
        for example in examples_of(model):
            for key, value in values(example):
                if value is None:
                    continue
                if key in MADE_IDS:
                    uuid.UUID(value)
                    checked["id"] += 1
                elif key.endswith("At") or key == "at":
                    rfc3339(value)
                    assert datetime.fromisoformat(value).utcoffset() is not None
                    checked["time"] += 1
                elif key in ("position", "next"):
                    assert isinstance(value, str), (model.__name__, key, value)
                    assert BASE64URL.fullmatch(value), value
                    assert len(value) == len(sealed), value
                    raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
                    assert len(raw) == len(base64.urlsafe_b64decode(sealed + "=="))
                    checked["position"] += 1
    assert min(checked.values()) > 0, checked


def test_the_story_s_ids_agree_across_answers() -> None:
    """A thread's link and ref name its case and run; a case names the report it was lifted
    from; a run's summary is what its threads' scores sum to; a list shows the same report and
    case as the single reads (SPEC W42, W43)."""
    runs = [
        eval_examples.RUN_RECORDED,
        eval_examples.CASE_WITH_RUNS["lastRun"],
        *eval_examples.CASE_WITH_RUNS["runs"],
    ]
    for run in runs:
        for thread in run["threads"]:
            assert thread["link"] == (
                f"/factory/evals/cases/{story.CASE_ID}/runs/{run['runId']}/threads/"
                f"{thread['index']}"
            )
            assert thread["threadRef"].startswith(f"{story.CASE_REF}/_Thread/{run['runId']}/")
    assert case_ref(story.AGENT, uuid.UUID(story.CASE_ID)) == story.CASE_REF
    scores = [ThreadScore(**thread["score"]) for thread in eval_examples.THREADS]
    summary = asdict(summarize(scores))  # SPEC §3.7: the pass rule, W65–W67
    assert {**summary, "reasons": list(summary["reasons"])} == eval_examples.SUMMARY
    assert eval_examples.CASE_WITH_RUNS["source"] == story.REPORT_ID
    assert (
        report_examples.WRONG_ANSWER_DRAFTED["reportId"] == report_examples.REPORT_VIEW["reportId"]
    )
    assert eval_examples.THREAD_RECORD["link"] == eval_examples.THREAD_1["link"]
    (inbox_item,) = report_examples.INBOX_PAGE["items"]
    detail_only = {k: report_examples.REPORT_VIEW[k] for k in ("lifecycle", "annotations")}
    assert {**inbox_item, "position": None, **detail_only} == {
        **report_examples.REPORT_VIEW,
        "position": None,
    }
    (listed,) = eval_examples.CASE_LIST["items"]
    same = ("caseId", "ref", "source", "agent", "mustGround", "mustAssert", "confirmedBy")
    assert {k: listed[k] for k in same} == {k: eval_examples.CASE_WITH_RUNS[k] for k in same}


# What Alice's chat client sent for the wrong-answer report in the story.
STORY_FACTS = {
    "thread": story.THREAD,
    "messageRef": f"{story.THREAD}/m4",
    "prompt": "Which hourly rate do I charge for concept work?",
    "context": ["acme/Office"],
    "reply": {
        "agentName": story.AGENT,
        "modelName": story.MODEL,
        "harness": "native",
        "toolCalls": [{"name": "Get", "arguments": "acme/Office/Welcome", "result": "ok"}],
        "text": "I'm afraid I don't know which hourly rate you charge.",
    },
    "account": "The coach does not know my hourly rate, but it is in the company profile.",
    "expected": "CHF 150 per hour",
    "evidence": {"node": story.NODE, "readable": True},
}


def test_the_story_s_labelled_block_is_the_one_the_service_composes() -> None:
    """SPEC W04–W13: the block, kind and category in the examples are what the composer
    writes for the story's facts today, so a change to the block shows up here."""
    block, draft = compose_report(ComposeWrongAnswer.model_validate(STORY_FACTS))
    assert draft.extra_context == report_examples.LABELLED_BLOCK
    assert block.kind == report_examples.WRONG_ANSWER_DRAFTED["kind"]
    assert draft.category == report_examples.WRONG_ANSWER_DRAFTED["category"]
    assert draft.message == report_examples.REPORT_VIEW["message"]


def test_nights_and_digests_answer_with_examples_of_their_own() -> None:
    """The contexts that declare their answers beside their commands are found too."""
    names = {model.__name__ for model in answer_models()}
    assert {"NightList", "NightView", "DigestList", "DigestView"} <= names
    assert examples_of(nights.NightView) == [night_examples.NIGHT_VIEW]
    assert examples_of(digests.DigestView) == [digest_examples.DIGEST_VIEW]


class StoryCases:
    """Our own stand-in for ``CaseRunner`` in the night's story: Alice's case talks to the
    coach three times and each reply is the story's good answer (no agent to call here)."""

    def __init__(self) -> None:
        self.case = SimpleNamespace(agent=story.AGENT)

    async def load(self, tenant_id: str, case_id: uuid.UUID) -> Any:
        assert (tenant_id, str(case_id)) == (story.TENANT, story.CASE_ID)
        return self.case

    def agent_for(self, case: Any, model: str | None = None) -> tuple[None, str | None]:
        return None, model

    def request(self, case: Any, **asked: Any) -> dict[str, Any]:
        return asked

    async def converse(
        self, client: None, case: Any, request: Any, run_id: uuid.UUID, index: int, **_: Any
    ) -> dict[str, Any]:
        assert request["submitter"] == story.REPORTER  # W101: as the confirmer
        link = f"/factory/evals/cases/{story.CASE_ID}/runs/{run_id}/threads/{index}"
        return {**eval_examples.THREAD_1, "index": index, "link": link}

    def recorded(self, case: Any, *, threads: list[dict[str, Any]], **_: Any) -> Any:
        scores = [ThreadScore(**thread["score"]) for thread in threads]
        return SimpleNamespace(summary=asdict(summarize(scores)))


class Recorded:
    """Our own bus: keeps what the runner issues, decides nothing."""

    def __init__(self) -> None:
        self.issued: list[Issued] = []

    async def execute(self, issued: Issued) -> None:
        self.issued.append(issued)


def story_night_settings() -> NightlySettings:
    return NightlySettings.from_environ(
        {
            "FEEDBACKLOOP_EVALS_NIGHTLY_ENABLED": "true",
            "FEEDBACKLOOP_EVALS_NIGHTLY_MODEL": story.MODEL,
            "FEEDBACKLOOP_MODEL_CATALOGUE": night_examples.NIGHT_INPUTS["catalogue"],
        }
    )


async def test_the_story_s_night_is_the_one_the_runner_plans_and_writes() -> None:
    """SPEC W87–W91, W101: the inputs, selection, run id, line (as ``NightlyRunner`` writes
    it, driven with our own stand-ins for the agent and the bus), counts and status of the
    night in the examples are what the code makes of Alice's confirmed case today."""
    view: Any = night_examples.NIGHT_VIEW
    settings = story_night_settings()
    assert settings.inputs() == night_examples.NIGHT_INPUTS
    planned_at = datetime.fromisoformat(view["plannedAt"])
    assert planned_at.hour == settings.start_hour_utc  # W83
    alice = Candidate(
        uuid.UUID(story.CASE_ID),
        story.CASE_REF,
        story.REPORTER,
        None,
        datetime.fromisoformat(eval_examples.RUN["recordedAt"]),
    )
    plan = plan_night(
        [alice], settings, Catalogue({story.MODEL: EU}), agent_configured=True, now=planned_at
    )
    assert [selected.as_json() for selected in plan.selected] == view["selected"]
    assert (plan.lines, plan.note) == ([], view["note"])
    night = Night.plan(
        tenant_id=story.TENANT,
        date=night_examples.NIGHT_DATE,
        inputs=settings.inputs(),
        selected=view["selected"],
        lines=[],
        note=plan.note,
        at=planned_at,
    )
    assert night.ref == view["ref"]
    assert (
        str(night_run_id(night_examples.NIGHT_DATE, alice.case_id)) == night_examples.NIGHT_RUN_ID
    )

    line_at = datetime.fromisoformat(night_examples.NIGHT_LINE["at"])
    # Alice maintains the story's agent in the register (decisions D103), on the library's
    # in-memory store.
    store = EventStore(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    store.save(
        AgentRegistration.create(
            story.TENANT, story.AGENT, [story.REPORTER], None, "admin", planned_at
        )
    )
    bus = Recorded()
    runner = NightlyRunner(
        store,
        bus,
        None,
        StoryCases(),
        settings,
        clock=lambda: line_at,
    )
    line = await runner._run_case(story.TENANT, night, night.selected[0])
    assert NightLine.model_validate(line).model_dump(mode="json", by_alias=True) == (
        night_examples.NIGHT_LINE
    )
    assert len(bus.issued) == view["conversations"] + 1  # each conversation, then the run

    night.finish_case(line, at=line_at)
    finished_at = datetime.fromisoformat(view["finishedAt"])
    night.finish(at=finished_at)
    assert night.status == view["status"]  # W90: nothing skipped or failed
    shown_lines = [
        NightLine.model_validate(each).model_dump(mode="json", by_alias=True)
        for each in night.lines
    ]
    assert shown_lines == view["lines"]
    row = {
        "date": date.fromisoformat(night_examples.NIGHT_DATE),
        "status": night.status,
        "selected": json.dumps(night.selected),
        "lines": json.dumps(night.lines),
        "planned_at": planned_at,
        "finished_at": finished_at,
        "position": 0,
    }
    shown = summary_json(row)  # the read model's own shaping
    assert {**shown, "position": None} == {
        **night_examples.NIGHT_LIST["items"][0],
        "position": None,
    }


def test_the_story_s_digest_is_the_one_the_builder_builds_and_posts() -> None:
    """SPEC W115–W126, W129–W130: the week's tables are the pure build of Alice's report and
    case, the digest's id and identities what the aggregate names, and the coach's post (with
    the twelve previous item ids) what the digest posts, as the relay publishes it."""
    submitted = datetime.fromisoformat(report_examples.REPORT_VIEW["submittedAt"])
    assert week_of(submitted) == digest_examples.WEEK
    report = ReportFact(
        uuid.UUID(story.REPORT_ID), submitted, "not-found", story.AGENT, story.MODEL
    )
    # After the night of 2026-11-28 the case's last run passed (W120).
    night = {RunnerKey("night", story.REPORTER): True}  # the night ran as the confirmer (W58)
    case = CaseFact(story.CASE_REF, story.AGENT, uuid.UUID(story.REPORT_ID), night)
    tables = build(digest_examples.WEEK, [report], [case], bound=PAGE_BOUND)
    assert tables.model_dump(mode="json", by_alias=True) == digest_examples.DIGEST_TABLES
    assert str(digest_id_for(story.TENANT, digest_examples.WEEK)) == digest_examples.DIGEST_ID

    built_at = datetime.fromisoformat(digest_examples.DIGEST_BUILT_AT)
    assert due_at(digest_examples.WEEK) <= built_at  # W106: read once the week is over
    view: Any = digest_examples.DIGEST_VIEW
    posted = view["posted"]
    assert posted["routes"] == [f"kafka:{topics.DIGEST_POSTED}"]
    digest = Digest.build(
        digest_id=uuid.UUID(digest_examples.DIGEST_ID),
        tenant_id=story.TENANT,
        tables=tables,
        at=built_at,
    )
    digest.post(
        instance=digest_examples.INSTANCE,
        url=digest_url(digest_examples.WEEK),
        routes=posted["routes"],
        at=datetime.fromisoformat(digest_examples.DIGEST_POSTED_AT),
        appraise=reports_only_line,
    )
    events = digest.collect_events()
    (agent_posted,) = [e for e in events if isinstance(e, Digest.AgentPosted)]
    (stamp,) = [e for e in events if isinstance(e, Digest.Posted)]
    assert stamp.identities == posted["identities"]
    assert stamp.note == posted["note"]
    published = digest_posted(agent_posted).model_dump(mode="json", by_alias=True)
    assert published == digest_examples.DIGEST_POSTED
    assert len(published["previousItems"]) == 12  # W130
