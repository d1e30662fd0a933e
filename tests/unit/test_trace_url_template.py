"""The console's trace link templates (decisions D265): checked when the service starts,
filled with the ids only."""

import pytest
from pydantic import ValidationError

from contracts.trace_links import trace_url, trace_url_template
from services.processes.settings import Settings

TRACE, SPAN = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"


@pytest.mark.parametrize(
    "template",
    [
        "https://jaeger.example/trace/{traceId}",
        "http://localhost:16686/trace/{traceId}?uiFind={spanId}",
        "https://cloud.langfuse.com/project/p/traces/{traceId}",
    ],
)
def test_a_template_naming_the_trace_id_is_taken(template: str) -> None:
    assert trace_url_template(template) == template


@pytest.mark.parametrize(
    ("template", "said"),
    [
        ("javascript:alert(1)//{traceId}", "http(s)"),
        ("/trace/{traceId}", "http(s)"),
        ("https://jaeger.example/trace/", "names {traceId}"),
        ("https://jaeger.example/{traceId}/{user}", "only {traceId} and {spanId}"),
        ("https://jaeger.example/trace/{traceId} x", "no spaces"),
    ],
)
def test_a_template_that_could_link_elsewhere_is_refused_naming_why(
    template: str, said: str
) -> None:
    with pytest.raises(ValueError, match=said.replace("(", r"\(").replace(")", r"\)")):
        trace_url_template(template)


def test_the_ids_fill_the_template_and_a_missing_span_leaves_it_empty() -> None:
    template = "https://jaeger.example/trace/{traceId}?uiFind={spanId}"
    assert trace_url(template, TRACE, SPAN) == f"https://jaeger.example/trace/{TRACE}?uiFind={SPAN}"
    assert trace_url(template, TRACE, None) == f"https://jaeger.example/trace/{TRACE}?uiFind="


def test_a_bad_template_stops_the_service_at_start_naming_the_setting() -> None:
    with pytest.raises(ValidationError, match="trace_links"):
        Settings(trace_links={"acme": "ftp://tracing.example/{traceId}"})
