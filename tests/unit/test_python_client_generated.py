"""The Python client's generated parts are what ``make client`` writes now (decisions D201,
D208): its models from the served OpenAPI document, its schemas from contracts/schemas; and
its version is the API's (D200)."""

import filecmp
import tomllib
from pathlib import Path

import python_client  # ops/python_client.py (tests/servers.py puts ops/ on sys.path)

from tests.servers import ROOT

CLIENT = ROOT / "contracts" / "clients" / "python"


def test_the_checked_in_models_and_schemas_are_what_make_client_writes(tmp_path: Path) -> None:
    python_client.write_all(tmp_path)
    package = python_client.PACKAGE
    stale = "stale: run `make client` and commit what it writes"
    assert (tmp_path / "models.py").read_text() == (package / "models.py").read_text(), stale
    compared = filecmp.dircmp(tmp_path / "schemas", package / "schemas")
    assert (compared.left_only, compared.right_only, compared.diff_files) == ([], [], []), stale


def test_the_client_is_versioned_with_the_api() -> None:
    import feedbackloop_client

    version = python_client.openapi_document()["info"]["version"]
    project = tomllib.loads((CLIENT / "pyproject.toml").read_text())["project"]
    assert project["version"] == feedbackloop_client.API_VERSION == version
    assert (project["name"], feedbackloop_client.__name__) == (
        "feedbackloop-client",
        "feedbackloop_client",
    )


def test_the_service_wheel_does_not_ship_the_client() -> None:
    from setuptools import find_packages

    found = find_packages(str(ROOT), include=["services*", "contracts*", "projections*"])
    assert not [name for name in found if "clients" in name or "feedbackloop_client" in name]
