"""Golden files: the checked-in schemas and AsyncAPI document are what the code generates.

A failure here means a published contract changed, or a checked-in document drifted from
the declarations. If the change is additive and intended, run
``feedbackloop contracts`` and commit; a breaking change is a new v2 topic instead.
"""

import json

import pytest

from services.processes.documents import (
    CONTRACTS_DIR,
    TOPICS_PAGE,
    asyncapi_document,
    json_schemas,
    render,
    topic_table,
    with_topic_table,
)


@pytest.mark.parametrize("name", sorted(json_schemas()))
def test_each_published_json_schema_is_pinned(name: str) -> None:
    pinned = (CONTRACTS_DIR / "schemas" / name).read_text()
    assert render(json_schemas()[name]) == pinned


def test_the_asyncapi_document_is_pinned() -> None:
    assert render(asyncapi_document()) == (CONTRACTS_DIR / "asyncapi.json").read_text()


def test_the_asyncapi_document_names_the_seed_topics_exactly() -> None:
    document = json.loads((CONTRACTS_DIR / "asyncapi.json").read_text())
    addresses = {channel["address"] for channel in document["channels"].values()}
    assert "evaluation.feedback.v1.feedback-recorded" in addresses  # SPEC C10
    assert "evaluation.feedback.v1.record-feedback" in addresses
    assert "evaluation.feedback.v1.record-feedback.dlt" in addresses


def test_no_checked_in_schema_is_left_that_nothing_declares() -> None:
    pinned = {path.name for path in (CONTRACTS_DIR / "schemas").glob("*.json")}
    assert pinned == set(json_schemas())


def test_the_kafka_page_topic_table_is_what_the_declarations_produce() -> None:
    page = TOPICS_PAGE.read_text()
    assert with_topic_table(page, topic_table(asyncapi_document())) == page


def test_the_topic_table_lists_every_published_topic_with_its_type() -> None:
    table = topic_table(asyncapi_document())
    assert (
        "| `evaluation.evals.v1.run-completed` | out | `evaluation.evals.v1.EvalRunCompleted`"
        in (table)
    )
    assert "| `evaluation.feedback.v1.record-feedback` | in |" in table
