"""``AsyncClient``: the API over HTTP for asyncio, the same operations as ``Client``: each
method is one operation of ``calls``; reads take ``min_position`` (a write's answer or its
``position``) to see that write, and ``iter_*`` walk every page of a list (D200–D209)."""

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
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


class AsyncClient:
    """``AsyncClient(base_url, api_key=...)`` or ``AsyncClient(base_url, credentials=...)``.

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
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if (api_key is None) == (credentials is None):
            raise ValueError("give api_key or credentials, one of them")
        self.auth: Auth = credentials if credentials is not None else ApiKey(str(api_key))
        self.retries = retries
        self.read_your_writes = read_your_writes
        self.last_position: str | None = None
        self.http = httpx.AsyncClient(base_url=base_url, timeout=timeout, transport=transport)

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self.http.aclose()

    # The one way out: credentials, Idempotency-Key, retries, typed errors.

    async def send(self, call: Call[A], idempotency_key: str | None = None) -> A:
        call = with_key(call, idempotency_key)
        refreshed = False
        for attempt in range(self.retries.attempts):
            last = attempt == self.retries.attempts - 1
            try:
                response = await self.http.send(
                    request(self.http, call, await self._authorization())
                )
            except CONNECTION_ERRORS as error:
                if last:
                    raise ConnectionFailed(f"{call.method} {call.path}: {error!r}") from error
                await asyncio.sleep(self.retries.delay(attempt))
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
                await asyncio.sleep(self.retries.delay(attempt, retry_after(response)))
                continue
            break
        answered = answer(call, response)
        if call.write and (position := position_written(answered)) is not None:
            self.last_position = position
        return answered

    async def _authorization(self) -> str:
        if isinstance(self.auth, ClientCredentials):
            return await self.auth.aheader(self.http)
        return self.auth.header()

    def _min(self, min_position: Position) -> str | None:
        given = position_of(min_position)
        return self.last_position if given is None and self.read_your_writes else given

    async def _items(self, call: Call[Any], page_size: int | None) -> AsyncIterator[Any]:
        before: str | None = None
        while True:
            page = await self.send(call.page(before, page_size))
            for item in page.items:
                yield item
            if page.next is None:
                return
            before = page.next

    # Feedback

    async def record_feedback(
        self,
        feedback: models.RecordFeedback | None = None,
        /,
        *,
        idempotency_key: str | None = None,
        **fields: Any,
    ) -> models.FeedbackWritten:
        """Record one piece of feedback: ``project_id``, ``subject_kind``, ``subject_ref``,
        ``kind`` and what the kind needs (``rating``, ``comment_ref``, ...)."""
        return await self.send(calls.record_feedback(feedback, fields), idempotency_key)

    async def record_feedback_batch(
        self,
        items: Sequence[models.RecordFeedbackItem | Mapping[str, Any]],
        *,
        idempotency_key: str | None = None,
    ) -> models.FeedbackBatchWritten:
        return await self.send(calls.record_feedback_batch(items), idempotency_key)

    async def feedback_page(
        self,
        *,
        min_position: Position = None,
        before: str | None = None,
        limit: int | None = None,
        **filters: Any,
    ) -> models.FeedbackPage:
        return await self.send(
            calls.feedback(self._min(min_position), **filters).page(before, limit)
        )

    def iter_feedback(
        self, *, min_position: Position = None, page_size: int | None = None, **filters: Any
    ) -> AsyncIterator[models.FeedbackItem]:
        return self._items(calls.feedback(self._min(min_position), **filters), page_size)

    async def store_artifact(
        self, content: bytes, content_type: str = "text/plain; charset=utf-8"
    ) -> models.ArtifactStored:
        return await self.send(calls.store_artifact(content, content_type))

    # Reports and the Inbox

    async def draft_report(
        self,
        report: models.DraftReport | None = None,
        /,
        *,
        idempotency_key: str | None = None,
        **fields: Any,
    ) -> models.ReportWritten:
        return await self.send(calls.draft_report(report, fields), idempotency_key)

    async def submit_report(
        self, report_id: Any, *, idempotency_key: str | None = None
    ) -> models.ReportSubmitted:
        return await self.send(calls.submit_report(report_id), idempotency_key)

    async def review_report(
        self,
        report_id: Any,
        review: models.ReviewReport | None = None,
        /,
        *,
        idempotency_key: str | None = None,
        **fields: Any,
    ) -> models.ReportWritten:
        return await self.send(calls.review_report(report_id, review, fields), idempotency_key)

    async def report(self, report_id: Any, *, min_position: Position = None) -> models.ReportDetail:
        return await self.send(calls.report(report_id, self._min(min_position)))

    def iter_inbox(
        self, *, min_position: Position = None, page_size: int | None = None, **filters: Any
    ) -> AsyncIterator[models.ReportView]:
        return self._items(calls.inbox(self._min(min_position), **filters), page_size)

    def iter_my_reports(
        self,
        *,
        min_position: Position = None,
        page_size: int | None = None,
        status: str | None = None,
    ) -> AsyncIterator[models.ReportView]:
        return self._items(calls.my_reports(self._min(min_position), status), page_size)

    # Eval cases and runs

    async def lift_eval_case(self, source: Any) -> models.CaseWritten:
        return await self.send(calls.lift_eval_case(source))

    async def eval_case(
        self, case_id: Any, *, min_position: Position = None
    ) -> models.CaseWithRuns:
        return await self.send(calls.eval_case(case_id, self._min(min_position)))

    def iter_eval_cases(
        self,
        *,
        min_position: Position = None,
        page_size: int | None = None,
        agent: str | None = None,
        confirmed: bool | None = None,
    ) -> AsyncIterator[models.CaseView]:
        return self._items(calls.eval_cases(self._min(min_position), agent, confirmed), page_size)

    async def confirm_eval_case(
        self, case_id: Any, confirmed: bool = True, *, idempotency_key: str | None = None
    ) -> models.CaseWritten:
        return await self.send(calls.confirm_eval_case(case_id, confirmed), idempotency_key)

    async def run_eval_case(
        self, case_id: Any, run: models.RunEvalCase | None = None, /, **fields: Any
    ) -> models.RunRecorded:
        return await self.send(calls.run_eval_case(case_id, run, fields))

    def iter_nights(
        self, *, min_position: Position = None, page_size: int | None = None
    ) -> AsyncIterator[models.NightSummary]:
        return self._items(calls.nights(self._min(min_position)), page_size)

    # Digests, datasets, learning proposals, agents

    def iter_digests(
        self, *, min_position: Position = None, page_size: int | None = None
    ) -> AsyncIterator[models.DigestSummary]:
        return self._items(calls.digests(self._min(min_position)), page_size)

    async def digest(self, week: str, *, min_position: Position = None) -> models.DigestView:
        return await self.send(calls.digest(week, self._min(min_position)))

    def iter_datasets(
        self, *, min_position: Position = None, page_size: int | None = None
    ) -> AsyncIterator[models.DatasetSummary]:
        return self._items(calls.datasets(self._min(min_position)), page_size)

    def iter_dataset_tasks(
        self, dataset_id: str, *, min_position: Position = None, page_size: int | None = None
    ) -> AsyncIterator[dict[str, Any]]:
        return self._items(calls.dataset_tasks(dataset_id, self._min(min_position)), page_size)

    async def snapshot_dataset(
        self, dataset_id: str, version: int | None = None, *, idempotency_key: str | None = None
    ) -> models.VersionPublished:
        return await self.send(calls.snapshot_dataset(dataset_id, version), idempotency_key)

    async def dataset_version(self, dataset_id: str, version: int) -> models.SnapshotDocument:
        return await self.send(calls.dataset_version(dataset_id, version))

    def iter_proposals(
        self,
        *,
        min_position: Position = None,
        page_size: int | None = None,
        state: str | None = None,
        kind: str | None = None,
        target: str | None = None,
    ) -> AsyncIterator[models.ProposalView]:
        return self._items(calls.proposals(self._min(min_position), state, kind, target), page_size)

    async def register_agent(
        self,
        agent: str,
        maintainers: Sequence[str],
        repository: str | None = None,
        *,
        idempotency_key: str | None = None,
    ) -> models.AgentRegistered:
        return await self.send(
            calls.register_agent(agent, maintainers, repository), idempotency_key
        )

    async def agent(self, name: str) -> models.RegisteredAgent:
        return await self.send(calls.agent(name))
