"""The checked-in documents of the public language, generated from the code that speaks it:
one JSON Schema per command, event and envelope, and the AsyncAPI document of the FastStream
app. Golden tests compare these files with what the code generates now.
"""

import json
from pathlib import Path
from typing import Any

from faststream.specification import AsyncAPI

from contracts.agent import AgentError, AgentReply, AgentRequest
from contracts.envelope import FeedbackRecordedMessage, RecordFeedbackMessage
from contracts.evals import (
    ConfirmEvalCase,
    EvalCaseConfirmed,
    EvalCaseLifted,
    EvalRunCompleted,
    LiftEvalCase,
    PatchEvalCase,
    RunEvalCase,
)
from contracts.feedback import Contract, FeedbackRecorded, RecordFeedback
from contracts.reports import (
    AgentOwnerNotified,
    ComposeWrongAnswer,
    DraftReport,
    ReportHandedOver,
    ReviewReport,
)

CONTRACTS_DIR = Path(__file__).resolve().parent.parent / "contracts"
SCHEMA_MODELS: tuple[type[Contract], ...] = (
    RecordFeedback,
    FeedbackRecorded,
    RecordFeedbackMessage,
    FeedbackRecordedMessage,
    DraftReport,
    ComposeWrongAnswer,
    ReviewReport,
    ReportHandedOver,
    AgentOwnerNotified,
    AgentRequest,
    AgentReply,
    AgentError,
    LiftEvalCase,
    PatchEvalCase,
    ConfirmEvalCase,
    RunEvalCase,
    EvalCaseLifted,
    EvalCaseConfirmed,
    EvalRunCompleted,
)


def json_schemas() -> dict[str, dict[str, Any]]:
    return {f"{model.__name__}.json": model.model_json_schema() for model in SCHEMA_MODELS}


def asyncapi_document() -> dict[str, Any]:
    from services.bootstrap import build_broker
    from services.inbound import register_inbound

    broker = build_broker("kafka:9092")
    # Registering reads neither the bus, the store nor the pool: only the subscriber's shape.
    register_inbound(broker, None, None, None, group_id="feedbackloop-inbound")  # type: ignore[arg-type]
    spec = AsyncAPI(
        broker,
        title="Feedback Loop",
        version="1",
        description="Commands Feedback Loop consumes and integration events it publishes, "
        "as CloudEvents 1.0 in structured JSON mode.",
    )
    document: dict[str, Any] = json.loads(spec.to_specification().to_json())
    return document


def render(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def write_all() -> list[Path]:
    written = []
    for name, schema in json_schemas().items():
        path = CONTRACTS_DIR / "schemas" / name
        path.write_text(render(schema))
        written.append(path)
    path = CONTRACTS_DIR / "asyncapi.json"
    path.write_text(render(asyncapi_document()))
    written.append(path)
    return written
