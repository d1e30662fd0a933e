"""The night's settings, the model catalogue and the confirmer's right: read tolerantly.

SPEC W80–W86 (defaults; a value that does not parse falls back and is named), W97–W98 (the
residency mark), W99–W100 (the confirmer's right as the register has it, a register that
cannot be read)."""

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from services.nightly.catalogue import parse_catalogue, read_catalogue
from services.nightly.confirmer import rights_now, why_confirmer_cannot
from services.nightly.planning import CONFIRMER_LACKS_UPDATE
from services.nightly.settings import NightlySettings
from services.permissions.agent_register import AgentRegistration, registration
from services.store.event_store import EventStore

P = "FEEDBACKLOOP_EVALS_NIGHTLY_"
AT = datetime(2026, 11, 29, tzinfo=UTC)


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


def registered(store: EventStore, tenant: str, agent: str, maintainers: list[str]) -> None:
    """The register as a PlatformAdmin's registration leaves it (the aggregate itself)."""
    found = registration(store, tenant, agent)
    if found is None:
        found = AgentRegistration.create(tenant, agent, maintainers, None, "admin", AT)
    else:
        found.register(maintainers, None, "admin", AT)
    store.save(found)


def test_the_confirmer_needs_to_maintain_the_cases_agent_in_the_register() -> None:
    """W99, decisions D103: the rule engine's answer (require_maintainer), whatever keys the
    person holds or lacks: a registered maintainer of the case's agent may, anyone else (of
    another agent, another tenant, an agent nobody registered) may not; removed from the
    register, they no longer may."""
    store = EventStore(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    registered(store, "t1", "Coach", ["alice", "olga"])
    registered(store, "t1", "Writer", ["rita"])
    registered(store, "t2", "Coach", ["bob"])
    assert why_confirmer_cannot(store, "t1", "alice", "Coach") is None
    assert why_confirmer_cannot(store, "t1", "olga", "Coach") is None  # no key: OIDC only
    assert why_confirmer_cannot(store, "t1", "rita", "Coach") == CONFIRMER_LACKS_UPDATE
    assert why_confirmer_cannot(store, "t1", "bob", "Coach") == CONFIRMER_LACKS_UPDATE
    assert why_confirmer_cannot(store, "t1", "alice", "Unregistered") == CONFIRMER_LACKS_UPDATE
    registered(store, "t1", "Coach", ["olga"])
    assert why_confirmer_cannot(store, "t1", "alice", "Coach") == CONFIRMER_LACKS_UPDATE
    assert rights_now(store, "t1", {("alice", "Coach"), ("olga", "Coach")}) == {
        ("alice", "Coach"): CONFIRMER_LACKS_UPDATE,
        ("olga", "Coach"): None,
    }
