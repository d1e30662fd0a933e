"""The night's settings, the model catalogue and the key-store check: read tolerantly.

SPEC W80–W86 (defaults; a value that does not parse falls back and is named), W97–W98 (the
residency mark), W99–W100 (the confirmer's right, a key store that cannot be read)."""

import json
from pathlib import Path

import pytest

from services.edge.auth import SCOPES, KeyRing, new_key
from services.nightly.catalogue import parse_catalogue, read_catalogue
from services.nightly.confirmer import (
    KeyStoreUnreadable,
    read_key_store,
    why_confirmer_cannot,
)
from services.nightly.planning import CONFIRMER_LACKS_UPDATE, PERMISSION_CHECK_UNAVAILABLE
from services.nightly.settings import NightlySettings

P = "FEEDBACKLOOP_EVALS_NIGHTLY_"


def test_the_defaults_are_the_seeds() -> None:
    """W80 off, W81 15 cases, W82 3 conversations, W83 01:00 UTC, W84 no model, W85 medium."""
    settings = NightlySettings.from_environ({})
    assert settings == NightlySettings(
        enabled=False,
        max_cases=15,
        conversations_per_case=3,
        start_hour_utc=1,
        model=None,
        effort="medium",
    )
    assert settings.unparsed == ()


def test_values_that_parse_are_taken() -> None:
    settings = NightlySettings.from_environ(
        {
            P + "ENABLED": "True",
            P + "MAX_CASES": "2",
            P + "CONVERSATIONS_PER_CASE": "5",
            P + "START_HOUR_UTC": "23",
            P + "MODEL": " gpt-4o-eu ",
            P + "EFFORT": "HIGH",
            "FEEDBACKLOOP_MODEL_CATALOGUE": "/etc/models.toml",
        }
    )
    assert (settings.enabled, settings.max_cases, settings.conversations_per_case) == (True, 2, 5)
    assert (settings.start_hour_utc, settings.model, settings.effort) == (23, "gpt-4o-eu", "high")
    assert settings.catalogue == Path("/etc/models.toml")
    assert settings.unparsed == ()


def test_a_value_that_does_not_parse_falls_back_to_its_default_and_is_named() -> None:
    """W86: the process still starts; the night's note names the setting."""
    settings = NightlySettings.from_environ(
        {
            P + "ENABLED": "sure",
            P + "MAX_CASES": "fifteen",
            P + "CONVERSATIONS_PER_CASE": "0",
            P + "START_HOUR_UTC": "24",
            P + "EFFORT": "extreme",
        }
    )
    assert settings.enabled is False
    assert (settings.max_cases, settings.conversations_per_case) == (15, 3)
    assert (settings.start_hour_utc, settings.effort) == (1, "medium")
    assert settings.unparsed == (
        P + "ENABLED",
        P + "MAX_CASES",
        P + "CONVERSATIONS_PER_CASE",
        P + "START_HOUR_UTC",
        P + "EFFORT",
    )
    assert settings.inputs()["unparsed"] == list(settings.unparsed)


def test_a_blank_model_is_no_model_not_a_bad_value() -> None:
    """W84: Model has no default; leaving it empty is not a typo."""
    settings = NightlySettings.from_environ({P + "MODEL": "  "})
    assert (settings.model, settings.unparsed) == (None, ())


def test_the_catalogue_gives_each_model_its_mark_in_toml_or_json(tmp_path: Path) -> None:
    """W97: the model's own residency mark, from a TOML or a JSON file."""
    toml = tmp_path / "models.toml"
    toml.write_text(
        '[models."gpt-4o-eu"]\nresidency = "EU"\n[models."gpt-4o-us"]\nresidency = "us"\n'
    )
    catalogue = read_catalogue(toml)
    assert catalogue.residency("gpt-4o-eu") == "eu"
    assert catalogue.residency("gpt-4o-us") == "us"
    as_json = tmp_path / "models.json"
    as_json.write_text(json.dumps({"models": {"m": {"residency": "eu"}, "bare": {}}}))
    catalogue = read_catalogue(as_json)
    assert catalogue.residency("m") == "eu"
    assert catalogue.residency("bare") is None  # W98: a missing mark is unreadable
    assert catalogue.residency("unlisted") is None


@pytest.mark.parametrize(
    ("text", "suffix"),
    [
        ("[models", ".toml"),
        ("{", ".json"),
        ('{"models": 3}', ".json"),
        ("models: {}", ".yaml"),
        ("a = " + "[" * 5000 + "]" * 5000, ".toml"),  # past the parsers' recursion
        ("[" * 100_000 + "]" * 100_000, ".json"),
    ],
)
def test_a_catalogue_that_cannot_be_read_leaves_every_mark_unreadable(
    text: str, suffix: str
) -> None:
    """W98: never a guess, never another model."""
    catalogue = parse_catalogue(text, suffix)
    assert catalogue.problem is not None
    assert catalogue.residency("anything") is None


def test_a_missing_catalogue_file_is_unreadable_not_an_error(tmp_path: Path) -> None:
    catalogue = read_catalogue(tmp_path / "absent.toml")
    assert catalogue.problem is not None
    assert "cannot be read" in catalogue.problem
    assert read_catalogue(None).problem is not None


def keys_file(tmp_path: Path, *entries: dict[str, object]) -> Path:
    path = tmp_path / "keys.json"
    path.write_text(json.dumps(list(entries)))
    return path


def test_the_confirmer_needs_a_live_person_key_of_the_tenant_with_the_run_scope(
    tmp_path: Path,
) -> None:
    """W99: a live key of the case's tenant, scope factory.evaluation.run, not a service's."""
    _, alice = new_key("t1", "alice", list(SCOPES))
    _, reader = new_key("t1", "rita", ["factory.evaluation.read"])
    _, service = new_key("t1", "svc", list(SCOPES), service=True)
    _, elsewhere = new_key("t2", "bob", list(SCOPES))
    path = keys_file(tmp_path, alice, reader, service, elsewhere)

    def store() -> KeyRing:
        return read_key_store([], path)

    assert why_confirmer_cannot(store, "t1", "alice") is None
    assert why_confirmer_cannot(store, "t1", "rita") == CONFIRMER_LACKS_UPDATE
    assert why_confirmer_cannot(store, "t1", "svc") == CONFIRMER_LACKS_UPDATE
    assert why_confirmer_cannot(store, "t1", "bob") == CONFIRMER_LACKS_UPDATE
    assert why_confirmer_cannot(store, "t1", "nobody") == CONFIRMER_LACKS_UPDATE


def test_a_revoked_key_neither_authenticates_nor_keeps_the_right(tmp_path: Path) -> None:
    """W99, and a revoked key stops authenticating at the door too."""
    key, alice = new_key("t1", "alice", list(SCOPES))
    path = keys_file(tmp_path, {**alice, "revoked": True})
    ring = read_key_store([], path)
    assert ring.identify(key) is None
    assert why_confirmer_cannot(lambda: read_key_store([], path), "t1", "alice") == (
        CONFIRMER_LACKS_UPDATE
    )


@pytest.mark.parametrize("content", [None, "not json", '[{"sha256": "short"}]'])
def test_a_key_store_that_cannot_be_read_is_unavailable_never_a_denial(
    tmp_path: Path, content: str | None
) -> None:
    """W100: the check cannot be evaluated; it does not say no."""
    path = tmp_path / "keys.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(KeyStoreUnreadable):
        read_key_store([], path)
    assert why_confirmer_cannot(lambda: read_key_store([], path), "t1", "alice") == (
        PERMISSION_CHECK_UNAVAILABLE
    )
