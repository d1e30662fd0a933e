"""The ``feedbackloop`` script's entry point imports nothing until it runs: a rebuild's worker
processes import the script that started their parent (``services.processes.entry``)."""

import subprocess
import sys


def test_importing_the_entry_point_leaves_the_command_line_unimported() -> None:
    probe = (
        "import sys, services.processes.entry;"
        " print('services.processes.cli' in sys.modules, len(sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    imported, modules = done.stdout.split()
    assert imported == "False"
    assert int(modules) < 100  # the interpreter's own; the command line brings thousands


def test_the_script_runs_the_command_line() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "from services.processes.entry import main; main()", "--help"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "rebuild" in done.stdout
