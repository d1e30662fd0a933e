"""The Python client installs from the repository into a fresh venv with pip and imports
there, its generated models and shipped schemas included (issue 42's first five minutes;
decisions D200). Slow (it creates a venv and installs httpx and pydantic): an e2e test, in
make test."""

import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.servers import ROOT

CLIENT = ROOT / "contracts" / "clients" / "python"


@pytest.mark.timeout(600)
def test_pip_installs_the_client_from_its_folder_into_a_fresh_venv(tmp_path: Path) -> None:
    # A copy of the folder, so the build (setuptools writes build/ beside the sources) never
    # leaves files in the repository.
    source = tmp_path / "client"
    shutil.copytree(CLIENT, source, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    venv.create(tmp_path / "venv", with_pip=True)
    python = tmp_path / "venv" / "bin" / "python"
    subprocess.run(
        [python, "-m", "pip", "install", "-q", "--disable-pip-version-check", str(source)],
        check=True, timeout=540,
    )  # fmt: skip
    probe = (
        "import feedbackloop_client as c, importlib.resources as r;"
        "print(c.__file__, c.API_VERSION, c.models.RecordFeedback.__name__,"
        " r.files('feedbackloop_client').joinpath('schemas/topics.json').is_file())"
    )
    shown = subprocess.run([python, "-c", probe], check=True, capture_output=True, text=True)
    where, version, model, schemas = shown.stdout.split()
    assert str(tmp_path / "venv") in where  # the installed copy, not the sources
    assert (version, model, schemas) == ("0.1.0", "RecordFeedback", "True")
    assert sys.executable != str(python)
