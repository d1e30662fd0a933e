"""Structured settings parsed by pydantic-settings: the variables and JSON formats of
docs/settings.md; a bad value stops the process at start, naming the setting."""

import json
from pathlib import Path

import pytest
from pydantic import ValidationError
from pydantic_settings import SettingsError

from services.edge.auth import SCOPES, KeyRing, new_key
from services.evals.scoring import Thresholds
from services.processes.opening import load_keys
from services.processes.settings import Settings


@pytest.fixture(autouse=True)
def no_inherited_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test states the environment it reads, whatever the shell exported."""
    for name in (
        "FEEDBACKLOOP_API_KEYS",
        "FEEDBACKLOOP_API_KEYS_FILE",
        "FEEDBACKLOOP_EVALS_THRESHOLDS",
        "FEEDBACKLOOP_AGENT_KIND",
        "FEEDBACKLOOP_AGENT_URL",
        "DATABASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)


def test_api_keys_are_read_from_the_json_list_in_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key, entry = new_key("t1", "alice", ["factory.feedback.read"])
    monkeypatch.setenv("FEEDBACKLOOP_API_KEYS", json.dumps([entry]))
    settings = Settings()
    principal = KeyRing.load(settings.api_keys, None).identify(key)
    assert principal is not None
    assert (principal.tenant_id, principal.subject) == ("t1", "alice")
    assert principal.scopes == {"factory.feedback.read"}


def test_an_unknown_scope_stops_the_start_naming_the_setting_and_the_field(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, entry = new_key("t1", "alice", ["factory.everything"])
    monkeypatch.setenv("FEEDBACKLOOP_API_KEYS", json.dumps([entry]))
    with pytest.raises(ValidationError, match=r"api_keys\.0\.scopes\.0"):
        Settings()


def test_api_keys_that_are_not_json_stop_the_start_naming_the_setting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FEEDBACKLOOP_API_KEYS", "[{not json")
    with pytest.raises(SettingsError, match="api_keys"):
        Settings()


def test_api_keys_given_in_code_take_the_same_json_text() -> None:
    key, entry = new_key("t1", "svc", list(SCOPES), service=True)
    settings = Settings(api_keys=json.dumps([entry]))  # type: ignore[arg-type]
    principal = KeyRing.load(settings.api_keys, None).identify(key)
    assert principal is not None
    assert principal.service


def test_the_keys_file_is_validated_and_a_bad_one_is_named(tmp_path: Path) -> None:
    key, entry = new_key("t2", "bob", ["factory.feedback.write"])
    good = tmp_path / "keys.json"
    good.write_text(json.dumps([entry]))
    assert KeyRing.load([], good).identify(key) is not None
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{**entry, "sha256": "not-a-hash"}]))
    with pytest.raises(ValueError, match="FEEDBACKLOOP_API_KEYS_FILE"):
        KeyRing.load([], bad)


def test_per_agent_thresholds_are_read_from_json_with_the_defaults_for_the_rest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SPEC W66: check 1 → 0.8 and check 3 → 0.6 until set per agent."""
    monkeypatch.setenv("FEEDBACKLOOP_EVALS_THRESHOLDS", '{"Agent/Path": {"looked": 0.9}}')
    rates = Settings().evals_thresholds
    assert rates == {"Agent/Path": {"looked": 0.9}}
    assert Thresholds(**rates["Agent/Path"]) == Thresholds(looked=0.9, correct=0.6)


@pytest.mark.parametrize(
    "value",
    ['{"Agent/Path": {"looked": 1.5}}', '{"Agent/Path": {"corect": 0.5}}', '["Agent/Path"]'],
    ids=["out-of-range", "misspelt", "not-a-mapping"],
)
def test_bad_thresholds_stop_the_start_naming_the_setting(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("FEEDBACKLOOP_EVALS_THRESHOLDS", value)
    with pytest.raises(ValidationError, match="evals_thresholds"):
        Settings()


def test_the_agent_settings_are_read_together_and_the_kind_in_any_case(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FEEDBACKLOOP_AGENT_KIND", " OpenAI ")
    monkeypatch.setenv("FEEDBACKLOOP_AGENT_URL", "http://agent/v1")
    agent = Settings().agent
    assert (agent.kind, agent.url, agent.timeout_seconds) == ("openai", "http://agent/v1", 120.0)


def test_an_unknown_agent_kind_stops_the_start_naming_the_setting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FEEDBACKLOOP_AGENT_KIND", "grpc")
    with pytest.raises(ValidationError, match="agent_kind"):
        Settings()


def test_the_embedded_default_without_keys_makes_one_development_key_and_keeps_it(
    tmp_path: Path,
) -> None:
    settings = Settings(data_dir=tmp_path)
    keys, dev_key = load_keys(settings)
    assert dev_key is not None
    principal = keys.identify(dev_key)
    assert principal is not None
    assert principal.scopes == set(SCOPES)
    assert load_keys(settings)[1] == dev_key  # read back, not made again


def test_configured_keys_mean_no_development_key(tmp_path: Path) -> None:
    _, entry = new_key("t1", "alice", ["factory.feedback.read"])
    settings = Settings(data_dir=tmp_path, api_keys=[entry])  # type: ignore[list-item]
    keys, dev_key = load_keys(settings)
    assert (len(keys), dev_key) == (1, None)
