"""The ``feedbackloop`` command: an entry point that imports nothing until it runs.

Every process a rebuild spawns (``services.projecting.apart``) first imports the script that
started its parent, as Python's spawned processes do. Were the command line (typer, rich,
uvicorn, the whole app) imported at the top of that script, every worker would pay for it and
use none of it; imported here, when the command runs, it spares the workers."""


def main() -> None:
    from services.processes.cli import app

    app()
