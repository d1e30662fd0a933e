"""The Python client (contracts/clients/python, decisions D200–D209) against the real service
served by uvicorn on a real PostgreSQL: feedback in three lines, every error a typed exception
naming the field, an Idempotency-Key on every write, read-your-writes, paging over a list,
the async client; retries are in test_python_client_retries.py, OAuth in
test_python_client_oauth.py."""

import uuid
from collections.abc import Iterator

import httpx
import pytest
from feedbackloop_client import (
    AsyncClient,
    Client,
    Conflict,
    Forbidden,
    NotFound,
    Unauthorized,
    ValidationFailed,
    models,
)

from tests.conftest import Keys, settings_for
from tests.integration.served_api import ServedApi, served_api

RATING = {"project_id": "p", "subject_kind": "run", "subject_ref": "run-1", "kind": "rating"}


@pytest.fixture
def api(database_url: str, keys: Keys) -> Iterator[ServedApi]:
    with served_api(
        settings_for(database_url, keys), ["feedback_list", "inbox", "access"]
    ) as served:
        yield served


def test_feedback_in_three_lines_then_read_as_written(api: ServedApi, keys: Keys) -> None:
    client = Client(api.url, api_key=keys.a)
    written = client.record_feedback(project_id="p", subject_kind="run", subject_ref="run-1", kind="rating", rating=5)  # fmt: skip  # noqa: E501  (the README's three lines)
    assert isinstance(written, models.FeedbackWritten)

    seen = list(client.iter_feedback(min_position=written))  # waits until the read model has it
    assert [(item.feedback_id, item.rating, item.given_by) for item in seen] == [
        (str(written.feedback_id), 5, "alice")
    ]
    assert client.last_position == written.position
    client.close()


def test_every_write_carries_an_idempotency_key_and_a_repeat_records_nothing(
    api: ServedApi, keys: Keys
) -> None:
    sent: list[str | None] = []
    with Client(api.url, api_key=keys.a) as client:
        client.http.event_hooks["request"].append(
            lambda request: sent.append(request.headers.get("Idempotency-Key"))
        )
        first = client.record_feedback(**RATING, rating=4)
        second = client.record_feedback(**RATING, rating=4)
        assert first.feedback_id != second.feedback_id  # a new uuid4 key each: two records
        again = client.record_feedback(**RATING, rating=4, idempotency_key=sent[0])
        assert again.feedback_id == first.feedback_id  # the caller's key: the same record
        before = api.event_count()
        with pytest.raises(Conflict) as conflict:  # the same key, another body (SPEC C11)
            client.record_feedback(**RATING, rating=3, idempotency_key=sent[0])
        assert conflict.value.status == 409
        assert api.event_count() == before
    assert len(sent) == 4
    assert all(sent)
    assert len(set(sent)) == 2
    assert str(uuid.UUID(str(sent[1]))) == sent[1]


def test_each_error_is_a_typed_exception_naming_the_field(api: ServedApi, keys: Keys) -> None:
    before = api.event_count()
    with Client(api.url, api_key=keys.a) as client:
        # Refused by the service: a stamped field (422 naming it) ...
        with pytest.raises(ValidationFailed) as stamped:
            client.record_feedback(**RATING, rating=5, tenantId="tenant-b")
        assert (stamped.value.status, stamped.value.field) == (422, "tenantId")
        # ... a rule only a decision can tell (a comment needs its commentRef) ...
        with pytest.raises(ValidationFailed) as rule:
            client.record_feedback(**{**RATING, "kind": "comment"})
        assert (rule.value.status, rule.value.field) == (422, "commentRef")
        # ... and refused before sending: a value the generated model already refuses.
        with pytest.raises(ValidationFailed) as early:
            client.record_feedback(**RATING, rating=9)
        assert (early.value.status, early.value.field) == (0, "rating")
        with pytest.raises(ValidationFailed) as missing:
            client.record_feedback(project_id="p", kind="rating", rating=1, subject_kind="run")
        assert missing.value.field == "subjectRef"
        with pytest.raises(NotFound):
            client.report(uuid.uuid4())
    assert api.event_count() == before

    with Client(api.url, api_key="not-a-key") as stranger, pytest.raises(Unauthorized):
        stranger.record_feedback(**RATING, rating=5)
    with Client(api.url, api_key=keys.a_read_only) as reader, pytest.raises(Forbidden) as refused:
        reader.record_feedback(**RATING, rating=5)
    assert refused.value.scope == "factory.feedback.write"
    assert api.event_count() == before


def test_a_list_longer_than_a_page_comes_whole_page_by_page(api: ServedApi, keys: Keys) -> None:
    with Client(api.url, api_key=keys.a, read_your_writes=True) as client:
        ids = [client.record_feedback(**RATING, rating=n).feedback_id for n in (1, 2, 3, 4, 5)]
        pages: list[httpx.Request] = []
        client.http.event_hooks["request"].append(pages.append)
        walked = [item.feedback_id for item in client.iter_feedback(page_size=2)]
        assert walked == [str(i) for i in ids[::-1]]  # newest first, nothing missed or repeated
        assert len(pages) == 3  # 2 + 2 + 1
        first = client.feedback_page(limit=2)
        assert len(first.items) == 2
        assert first.next is not None
    # Another tenant's list is its own.
    with Client(api.url, api_key=keys.b) as other:
        assert list(other.iter_feedback()) == []


async def test_the_async_client_drafts_submits_and_reads_a_report(
    api: ServedApi, keys: Keys
) -> None:
    async with AsyncClient(api.url, api_key=keys.a, read_your_writes=True) as client:
        written = await client.record_feedback(**RATING, rating=2)
        mine = [item async for item in client.iter_feedback()]
        assert [item.feedback_id for item in mine] == [str(written.feedback_id)]

        draft = await client.draft_report(category="idea", message="Let the coach cite sources")
        submitted = await client.submit_report(draft.report_id)
        assert submitted.status == "HandedOver"  # an idea goes to engineering (SPEC C26)
        report = await client.report(draft.report_id)
        assert (report.message, report.reporter) == ("Let the coach cite sources", "alice")
        mine_ = [item.report_id async for item in client.iter_my_reports(page_size=1)]
        assert mine_ == [str(draft.report_id)]
        with pytest.raises(ValidationFailed) as refused:
            await client.draft_report(category="idea", message="x", reportId="mine")
        assert refused.value.field == "reportId"
