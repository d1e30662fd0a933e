"""W3C trace context: only a well-formed traceparent travels with the work."""

import pytest

from services.observing.tracing import valid_traceparent

GOOD = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def test_a_well_formed_traceparent_is_kept_in_lower_case() -> None:
    assert valid_traceparent(GOOD) == GOOD
    assert valid_traceparent(GOOD.upper().replace("00-", "00-", 1)) == GOOD


@pytest.mark.parametrize(
    "value",
    [
        None,
        "",
        "not-a-trace",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  # all-zero trace id
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  # all-zero span id
        "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  # unknown version
        GOOD + "-extra",
        "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",  # short trace id
        "x" * 10_000,
    ],
)
def test_anything_else_is_ignored_never_an_error(value: object) -> None:
    assert valid_traceparent(value) is None
