"""The access log prints a route naming a person as its template (decisions D134)."""

import logging
from types import SimpleNamespace

import pytest
from starlette.requests import Request

from services.edge.access_log import PersonPathRedaction, person_paths
from services.edge.error_handlers import route_of

pytestmark = pytest.mark.unit
TEMPLATES = ["/factory/people/{person}", "/factory/people/{person}/export", "/factory/reports"]


def access_record(path: str) -> logging.LogRecord:
    """A record as uvicorn's access logger makes it."""
    return logging.LogRecord(
        "uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5000", "DELETE", path, "1.1", 200), None,
    )  # fmt: skip


def test_only_templates_with_a_person_parameter_are_redacted() -> None:
    assert [t for _, t in person_paths([*TEMPLATES, "/factory/evals/cases/{case_id}"])] == [
        "/factory/people/{person}",
        "/factory/people/{person}/export",
    ]


@pytest.mark.parametrize(
    ("path", "printed"),
    [
        ("/factory/people/sglauser", "/factory/people/{person}"),
        ("/factory/people/sglauser/export", "/factory/people/{person}/export"),
        ("/factory/people/sglauser/export?x=sglauser", "/factory/people/{person}/export?…"),
        ("/factory/reports", "/factory/reports"),
    ],
)
def test_the_access_log_never_prints_a_person_s_id(path: str, printed: str) -> None:
    record = access_record(path)
    assert PersonPathRedaction(lambda: TEMPLATES).filter(record)
    assert record.getMessage() == f'127.0.0.1:5000 - "DELETE {printed} HTTP/1.1" 200'


def test_the_error_log_names_a_failed_request_by_its_route_not_its_path() -> None:
    """D134: a 500's log line (and a client gone mid-request) prints the route's template."""
    scope = {
        "type": "http", "method": "DELETE", "path": "/factory/people/ada-lovelace",
        "headers": [], "query_string": b"",
        "route": SimpleNamespace(path="/factory/people/{person}"),
    }  # fmt: skip
    assert route_of(Request(scope)) == "/factory/people/{person}"
    unrouted = {**scope, "route": None, "path": "/nowhere"}
    assert route_of(Request(unrouted)) == "/nowhere"
