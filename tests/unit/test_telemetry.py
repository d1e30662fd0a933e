"""OpenTelemetry only when an OTLP endpoint is set: nothing is imported or
configured otherwise; with one, FastAPI, asyncpg and aiokafka are instrumented."""

import subprocess
import sys

import pytest
from fastapi import FastAPI

from services.observing.otel import ENDPOINT, configure

# The no-op OpenTelemetry API may be loaded by libraries; the SDK, the exporter and the
# instrumentations are ours to load, and only when asked.
LOADED_ONLY_WHEN_ASKED = (
    "opentelemetry.sdk",
    "opentelemetry.exporter",
    "opentelemetry.instrumentation",
)


def test_without_an_endpoint_no_tracing_is_loaded_or_configured() -> None:
    # A fresh interpreter: this test session may have loaded OpenTelemetry already.
    probe = (
        f"LOADED_ONLY_WHEN_ASKED = {LOADED_ONLY_WHEN_ASKED!r}\n"
        "import os, sys; os.environ.pop('OTEL_EXPORTER_OTLP_ENDPOINT', None)\n"
        "from fastapi import FastAPI\n"
        "from services.observing.otel import configure\n"
        "app = FastAPI()\n"
        "assert configure(app) is None\n"
        "assert not app.user_middleware\n"
        "print(sorted(m for m in sys.modules if m.startswith(LOADED_ONLY_WHEN_ASKED)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "[]"


def test_with_an_endpoint_http_postgres_and_kafka_are_traced_until_undone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from opentelemetry.instrumentation.aiokafka import AIOKafkaInstrumentor
    from opentelemetry.instrumentation.asyncpg import AsyncPGInstrumentor

    monkeypatch.setenv(ENDPOINT, "http://127.0.0.1:9")  # nothing is sent: no span ends here
    app = FastAPI()
    undo = configure(app)
    assert undo is not None
    try:
        assert AsyncPGInstrumentor().is_instrumented_by_opentelemetry
        assert AIOKafkaInstrumentor().is_instrumented_by_opentelemetry
        assert getattr(app, "_is_instrumented_by_opentelemetry", False)
    finally:
        undo()
    assert not AsyncPGInstrumentor().is_instrumented_by_opentelemetry
    assert not AIOKafkaInstrumentor().is_instrumented_by_opentelemetry
