"""``feedbackloop api``: the server settings it hands uvicorn. uvicorn itself is
replaced by a recorder of its arguments: starting it is the integration tests' work."""

import os
from typing import Any

import pytest
import uvicorn
from typer.testing import CliRunner

from services.processes import cli
from services.processes.api_worker import WORKERS_VARIABLE
from services.processes.commands_http import WORKER_HEALTHCHECK_SECONDS
from services.processes.http_answer_writes import OneWriteHttpTools

pytestmark = pytest.mark.unit


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []

    def run(app: str, **settings: Any) -> None:
        calls.append({"app": app, **settings})

    monkeypatch.setattr(uvicorn, "run", run)
    monkeypatch.setenv("DATABASE_URL", "postgresql://nobody@127.0.0.1:1/none")
    for name in ("FEEDBACKLOOP_HOST", "FEEDBACKLOOP_PORT", WORKERS_VARIABLE):
        monkeypatch.delenv(name, raising=False)  # the command sets them for its workers
    return calls


def test_a_worker_per_core_up_to_two_by_default_with_the_production_settings(
    started: list[dict[str, Any]],
) -> None:
    result = CliRunner().invoke(cli.app, ["api"])
    assert result.exit_code == 0, result.output
    [settings] = started
    assert settings["workers"] == min(os.cpu_count() or 1, 2)
    assert settings["loop"] == "uvloop"
    assert settings["http"] is OneWriteHttpTools


def test_a_busy_worker_is_given_half_a_minute_to_answer_the_supervisor_before_it_is_killed(
    started: list[dict[str, Any]],
) -> None:
    """uvicorn's default 5 s would kill every worker of a loaded two-core machine while it
    starts."""
    result = CliRunner().invoke(cli.app, ["api", "--workers", "2"])
    assert result.exit_code == 0, result.output
    [settings] = started
    assert settings["workers"] == 2
    assert settings["timeout_worker_healthcheck"] == WORKER_HEALTHCHECK_SECONDS == 30
