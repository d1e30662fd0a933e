"""What each operation sends and what it answers, written once for ``Client`` and
``AsyncClient``: a ``Call`` names the method, the path, the parameters, the body and the
generated model of the answer. Bodies are built from the generated models, so a value they
refuse is a ``ValidationFailed`` naming the field before anything is sent."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Protocol, TypeVar
from urllib.parse import quote

import pydantic

from feedbackloop_client import models
from feedbackloop_client.errors import refused_before_sending

A = TypeVar("A", bound=pydantic.BaseModel)
M = TypeVar("M", bound=pydantic.BaseModel)
T_co = TypeVar("T_co", covariant=True)


class Written(Protocol):
    """A write's answer: its ``position`` is what a read passes as ``minPosition``."""

    @property
    def position(self) -> str: ...


class Paged(Protocol[T_co]):
    """A page of a list: its items and the cursor of the next page (null on the last)."""

    @property
    def items(self) -> Sequence[T_co]: ...

    @property
    def next(self) -> str | None: ...


@dataclass(frozen=True)
class Call(Generic[A]):
    method: str
    path: str
    answer: type[A]
    params: Mapping[str, Any] = field(default_factory=dict)
    json: Any = None
    content: bytes | None = None
    content_type: str | None = None
    idempotency_key: str | None = None

    @property
    def write(self) -> bool:
        return self.method != "GET"

    def query(self) -> dict[str, str]:
        """The parameters given, as the API spells them (``None``: not sent)."""
        return {name: _text(value) for name, value in self.params.items() if value is not None}

    def page(self, before: str | None, limit: int | None) -> "Call[A]":
        return replace(self, params={**self.params, "before": before, "limit": limit})


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(getattr(value, "value", value))


def segment(value: Any) -> str:
    """A path segment: agents' names hold slashes (``Office/Agent/Coach``) and stay whole."""
    return quote(str(value), safe="/" if isinstance(value, str) and "/" in value else "")


def body(model: type[M], given: M | Mapping[str, Any] | None, fields: Mapping[str, Any]) -> Any:
    """The JSON body of ``model`` from a model instance or keyword fields (Python or API
    names); unset and null fields are left out, as the service's own defaults apply."""
    if isinstance(given, pydantic.BaseModel):
        given = given.model_dump(by_alias=True, exclude_none=True)
    try:
        built = model.model_validate({**(given or {}), **fields})
    except pydantic.ValidationError as error:
        raise refused_before_sending(error) from None
    return built.model_dump(mode="json", by_alias=True, exclude_none=True)


def position_of(min_position: "str | Written | None") -> str | None:
    if min_position is None or isinstance(min_position, str):
        return min_position
    return min_position.position


# Feedback (SPEC C04–C11)


def record_feedback(
    given: models.RecordFeedback | None, fields: Mapping[str, Any]
) -> Call[models.FeedbackWritten]:
    json = body(models.RecordFeedback, given, fields)
    return Call("POST", "/factory/feedback", models.FeedbackWritten, json=json)


def record_feedback_batch(
    items: Sequence[models.RecordFeedbackItem | Mapping[str, Any]],
) -> Call[models.FeedbackBatchWritten]:
    built = [body(models.RecordFeedbackItem, item, {}) for item in items]
    return Call(
        "POST", "/factory/feedback:batch", models.FeedbackBatchWritten, json={"items": built}
    )


def feedback(min_position: str | None, **filters: Any) -> Call[models.FeedbackPage]:
    params = {"subjectKind": filters.get("subject_kind"), "subjectRef": filters.get("subject_ref"),
              "kind": filters.get("kind"), "minPosition": min_position}  # fmt: skip
    return Call("GET", "/factory/feedback", models.FeedbackPage, params=params)


def store_artifact(content: bytes, content_type: str) -> Call[models.ArtifactStored]:
    return Call(
        "POST",
        "/factory/artifacts",
        models.ArtifactStored,
        content=content,
        content_type=content_type,
    )


# Reports and the Inbox (SPEC C24–C31)


def draft_report(
    given: models.DraftReport | None, fields: Mapping[str, Any]
) -> Call[models.ReportWritten]:
    return Call(
        "POST",
        "/factory/reports",
        models.ReportWritten,
        json=body(models.DraftReport, given, fields),
    )


def submit_report(report_id: Any) -> Call[models.ReportSubmitted]:
    return Call("POST", f"/factory/reports/{segment(report_id)}/submit", models.ReportSubmitted)


def review_report(
    report_id: Any, given: models.ReviewReport | None, fields: Mapping[str, Any]
) -> Call[models.ReportWritten]:
    json = body(models.ReviewReport, given, fields)
    return Call(
        "POST", f"/factory/reports/{segment(report_id)}/review", models.ReportWritten, json=json
    )


def report(report_id: Any, min_position: str | None) -> Call[models.ReportDetail]:
    path = f"/factory/reports/{segment(report_id)}"
    return Call("GET", path, models.ReportDetail, params={"minPosition": min_position})


INBOX_FILTERS = {"status": "status", "category": "category", "kind": "kind", "agent": "agent",
                 "addressee": "addressee", "submitted_before": "submittedBefore",
                 "submitted_after": "submittedAfter"}  # fmt: skip


def inbox(min_position: str | None, **filters: Any) -> Call[models.InboxPage]:
    params = {api: filters.get(name) for name, api in INBOX_FILTERS.items()}
    return Call(
        "GET",
        "/factory/reports/inbox",
        models.InboxPage,
        params={**params, "minPosition": min_position},
    )


def my_reports(min_position: str | None, status: str | None = None) -> Call[models.MyReportsPage]:
    params = {"status": status, "minPosition": min_position}
    return Call("GET", "/factory/reports/mine", models.MyReportsPage, params=params)


# Eval cases and runs (SPEC C12, C13)


def lift_eval_case(source: Any) -> Call[models.CaseWritten]:
    json = body(models.LiftEvalCase, None, {"source": source})
    return Call("POST", "/factory/evals/cases", models.CaseWritten, json=json)


def eval_cases(
    min_position: str | None, agent: str | None = None, confirmed: bool | None = None
) -> Call[models.CaseList]:
    params = {"agent": agent, "confirmed": confirmed, "minPosition": min_position}
    return Call("GET", "/factory/evals/cases", models.CaseList, params=params)


def eval_case(case_id: Any, min_position: str | None) -> Call[models.CaseWithRuns]:
    path = f"/factory/evals/cases/{segment(case_id)}"
    return Call("GET", path, models.CaseWithRuns, params={"minPosition": min_position})


def confirm_eval_case(case_id: Any, confirmed: bool) -> Call[models.CaseWritten]:
    json = body(models.ConfirmEvalCase, None, {"confirmed": confirmed})
    return Call(
        "POST", f"/factory/evals/cases/{segment(case_id)}/confirm", models.CaseWritten, json=json
    )


def run_eval_case(
    case_id: Any, given: models.RunEvalCase | None, fields: Mapping[str, Any]
) -> Call[models.RunRecorded]:
    json = body(models.RunEvalCase, given, fields)
    return Call(
        "POST", f"/factory/evals/cases/{segment(case_id)}/runs", models.RunRecorded, json=json
    )


def nights(min_position: str | None) -> Call[models.NightList]:
    return Call(
        "GET", "/factory/evals/nights", models.NightList, params={"minPosition": min_position}
    )


# Digests (SPEC W123)


def digests(min_position: str | None) -> Call[models.DigestList]:
    return Call(
        "GET", "/factory/feedback/digests", models.DigestList, params={"minPosition": min_position}
    )


def digest(week: str, min_position: str | None) -> Call[models.DigestView]:
    path = f"/factory/feedback/digests/{segment(week)}"
    return Call("GET", path, models.DigestView, params={"minPosition": min_position})


# Datasets (SPEC C14–C23)


def datasets(min_position: str | None) -> Call[models.DatasetList]:
    return Call(
        "GET",
        "/factory/evaluation/datasets",
        models.DatasetList,
        params={"minPosition": min_position},
    )


def dataset_tasks(dataset_id: str, min_position: str | None) -> Call[models.TaskPage]:
    path = f"/factory/evaluation/datasets/{segment(dataset_id)}/tasks"
    return Call("GET", path, models.TaskPage, params={"minPosition": min_position})


def snapshot_dataset(dataset_id: str, version: int | None) -> Call[models.VersionPublished]:
    json = body(models.SnapshotDataset, None, {"version": version})
    path = f"/factory/evaluation/datasets/{segment(dataset_id)}/snapshot"
    return Call("POST", path, models.VersionPublished, json=json)


def dataset_version(dataset_id: str, version: int) -> Call[models.SnapshotDocument]:
    path = f"/factory/evaluation/datasets/{segment(dataset_id)}/versions/{int(version)}"
    return Call("GET", path, models.SnapshotDocument)


# Learning proposals (SPEC C33–C38) and the agent register (SPEC C52)


def proposals(
    min_position: str | None,
    state: str | None = None,
    kind: str | None = None,
    target: str | None = None,
) -> Call[models.ProposalList]:
    params = {"state": state, "kind": kind, "target": target, "minPosition": min_position}
    return Call("GET", "/factory/learning/proposals", models.ProposalList, params=params)


def register_agent(
    agent: str, maintainers: Sequence[str], repository: str | None
) -> Call[models.AgentRegistered]:
    json = body(
        models.RegisterAgent, None, {"maintainers": list(maintainers), "repository": repository}
    )
    return Call("PUT", f"/factory/agents/{segment(agent)}", models.AgentRegistered, json=json)


def agent(name: str) -> Call[models.RegisteredAgent]:
    return Call("GET", f"/factory/agents/{segment(name)}", models.RegisteredAgent)
