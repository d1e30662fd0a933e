"""``Client``: the API over HTTP, blocking. Each method is one operation of ``calls``; reads
take ``min_position`` (a write's answer or its ``position``) to see that write, and
``iter_*`` walk every page of a list (decisions D200–D209)."""

import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TypeVar

import httpx
import pydantic

from feedbackloop_client import calls, models
from feedbackloop_client.auth import ApiKey, Auth, ClientCredentials
from feedbackloop_client.calls import Call, Written, position_of
from feedbackloop_client.errors import ConnectionFailed
from feedbackloop_client.retries import DEFAULT_RETRIES, Retries, retried, retry_after
from feedbackloop_client.sending import (
    CONNECTION_ERRORS,
    answer,
    position_written,
    request,
    with_key,
)

A = TypeVar("A", bound=pydantic.BaseModel)
Position = str | Written | None


class Client:
    """``Client(base_url, api_key=...)`` or ``Client(base_url, credentials=ClientCredentials(…))``.

    ``read_your_writes=True``: every read waits for the last write this client made."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        credentials: ClientCredentials | None = None,
        retries: Retries = DEFAULT_RETRIES,
        timeout: float = 30.0,
        read_your_writes: bool = False,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if (api_key is None) == (credentials is None):
            raise ValueError("give api_key or credentials, one of them")
        self.auth: Auth = credentials if credentials is not None else ApiKey(str(api_key))
        self.retries = retries
        self.read_your_writes = read_your_writes
        self.last_position: str | None = None
        self.http = httpx.Client(base_url=base_url, timeout=timeout, transport=transport)

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self.http.close()

    # The one way out: credentials, Idempotency-Key, retries, typed errors.

    def send(self, call: Call[A], idempotency_key: str | None = None) -> A:
        call = with_key(call, idempotency_key)
        refreshed = False
        for attempt in range(self.retries.attempts):
            last = attempt == self.retries.attempts - 1
            try:
                response = self.http.send(request(self.http, call, self._authorization()))
            except CONNECTION_ERRORS as error:
                if last:
                    raise ConnectionFailed(f"{call.method} {call.path}: {error!r}") from error
                time.sleep(self.retries.delay(attempt))
                continue
            if (
                response.status_code == 401
                and isinstance(self.auth, ClientCredentials)
                and not refreshed
            ):
                self.auth.forget()  # a token the service no longer takes: fetch one, once
                refreshed = True
                continue
            if retried(response) and not last:
                time.sleep(self.retries.delay(attempt, retry_after(response)))
                continue
            break
        answered = answer(call, response)
        if call.write and (position := position_written(answered)) is not None:
            self.last_position = position
        return answered

    def _authorization(self) -> str:
        if isinstance(self.auth, ClientCredentials):
            return self.auth.header(self.http)
        return self.auth.header()

    def _min(self, min_position: Position) -> str | None:
        given = position_of(min_position)
        return self.last_position if given is None and self.read_your_writes else given

    def _items(self, call: Call[Any], page_size: int | None) -> Iterator[Any]:
        before: str | None = None
        while True:
            page = self.send(call.page(before, page_size))
            yield from page.items
            if page.next is None:
                return
            before = page.next

    # Feedback

    def record_feedback(
        self,
        feedback: models.RecordFeedback | None = None,
        /,
        *,
        idempotency_key: str | None = None,
        **fields: Any,
    ) -> models.FeedbackWritten:
        """Record one piece of feedback: ``project_id``, ``subject_kind``, ``subject_ref``,
        ``kind`` and what the kind needs (``rating``, ``comment_ref``, ...)."""
        return self.send(calls.record_feedback(feedback, fields), idempotency_key)

    def record_feedback_batch(
        self,
        items: Sequence[models.RecordFeedbackItem | Mapping[str, Any]],
        *,
        idempotency_key: str | None = None,
    ) -> models.FeedbackBatchWritten:
        return self.send(calls.record_feedback_batch(items), idempotency_key)

    def feedback_page(
        self,
        *,
        min_position: Position = None,
        before: str | None = None,
        limit: int | None = None,
        **filters: Any,
    ) -> models.FeedbackPage:
        return self.send(calls.feedback(self._min(min_position), **filters).page(before, limit))

    def iter_feedback(
        self, *, min_position: Position = None, page_size: int | None = None, **filters: Any
    ) -> Iterator[models.FeedbackItem]:
        return self._items(calls.feedback(self._min(min_position), **filters), page_size)

    def store_artifact(
        self, content: bytes, content_type: str = "text/plain; charset=utf-8"
    ) -> models.ArtifactStored:
        return self.send(calls.store_artifact(content, content_type))

    # Reports and the Inbox

    def draft_report(
        self,
        report: models.DraftReport | None = None,
        /,
        *,
        idempotency_key: str | None = None,
        **fields: Any,
    ) -> models.ReportWritten:
        return self.send(calls.draft_report(report, fields), idempotency_key)

    def submit_report(
        self, report_id: Any, *, idempotency_key: str | None = None
    ) -> models.ReportSubmitted:
        return self.send(calls.submit_report(report_id), idempotency_key)

    def review_report(
        self,
        report_id: Any,
        review: models.ReviewReport | None = None,
        /,
        *,
        idempotency_key: str | None = None,
        **fields: Any,
    ) -> models.ReportWritten:
        return self.send(calls.review_report(report_id, review, fields), idempotency_key)

    def report(self, report_id: Any, *, min_position: Position = None) -> models.ReportDetail:
        return self.send(calls.report(report_id, self._min(min_position)))

    def iter_inbox(
        self, *, min_position: Position = None, page_size: int | None = None, **filters: Any
    ) -> Iterator[models.ReportView]:
        return self._items(calls.inbox(self._min(min_position), **filters), page_size)

    def iter_my_reports(
        self,
        *,
        min_position: Position = None,
        page_size: int | None = None,
        status: str | None = None,
    ) -> Iterator[models.ReportView]:
        return self._items(calls.my_reports(self._min(min_position), status), page_size)

    # Eval cases and runs

    def lift_eval_case(self, source: Any) -> models.CaseWritten:
        return self.send(calls.lift_eval_case(source))

    def eval_case(self, case_id: Any, *, min_position: Position = None) -> models.CaseWithRuns:
        return self.send(calls.eval_case(case_id, self._min(min_position)))

    def iter_eval_cases(
        self,
        *,
        min_position: Position = None,
        page_size: int | None = None,
        agent: str | None = None,
        confirmed: bool | None = None,
    ) -> Iterator[models.CaseView]:
        return self._items(calls.eval_cases(self._min(min_position), agent, confirmed), page_size)

    def confirm_eval_case(
        self, case_id: Any, confirmed: bool = True, *, idempotency_key: str | None = None
    ) -> models.CaseWritten:
        return self.send(calls.confirm_eval_case(case_id, confirmed), idempotency_key)

    def run_eval_case(
        self, case_id: Any, run: models.RunEvalCase | None = None, /, **fields: Any
    ) -> models.RunRecorded:
        return self.send(calls.run_eval_case(case_id, run, fields))

    def iter_nights(
        self, *, min_position: Position = None, page_size: int | None = None
    ) -> Iterator[models.NightSummary]:
        return self._items(calls.nights(self._min(min_position)), page_size)

    # Digests, datasets, learning proposals, agents

    def iter_digests(
        self, *, min_position: Position = None, page_size: int | None = None
    ) -> Iterator[models.DigestSummary]:
        return self._items(calls.digests(self._min(min_position)), page_size)

    def digest(self, week: str, *, min_position: Position = None) -> models.DigestView:
        return self.send(calls.digest(week, self._min(min_position)))

    def iter_datasets(
        self, *, min_position: Position = None, page_size: int | None = None
    ) -> Iterator[models.DatasetSummary]:
        return self._items(calls.datasets(self._min(min_position)), page_size)

    def iter_dataset_tasks(
        self, dataset_id: str, *, min_position: Position = None, page_size: int | None = None
    ) -> Iterator[dict[str, Any]]:
        return self._items(calls.dataset_tasks(dataset_id, self._min(min_position)), page_size)

    def snapshot_dataset(
        self, dataset_id: str, version: int | None = None, *, idempotency_key: str | None = None
    ) -> models.VersionPublished:
        return self.send(calls.snapshot_dataset(dataset_id, version), idempotency_key)

    def dataset_version(self, dataset_id: str, version: int) -> models.SnapshotDocument:
        return self.send(calls.dataset_version(dataset_id, version))

    def iter_proposals(
        self,
        *,
        min_position: Position = None,
        page_size: int | None = None,
        state: str | None = None,
        kind: str | None = None,
        target: str | None = None,
    ) -> Iterator[models.ProposalView]:
        return self._items(calls.proposals(self._min(min_position), state, kind, target), page_size)

    def register_agent(
        self,
        agent: str,
        maintainers: Sequence[str],
        repository: str | None = None,
        *,
        idempotency_key: str | None = None,
    ) -> models.AgentRegistered:
        return self.send(calls.register_agent(agent, maintainers, repository), idempotency_key)

    def agent(self, name: str) -> models.RegisteredAgent:
        return self.send(calls.agent(name))
