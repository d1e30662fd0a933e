"""The ``feedbackloop`` command: an entry point that imports nothing until it runs.

Every process a rebuild spawns (``services.projecting.apart``) first imports the script that started
its parent, as Python's spawned processes do; that script imported the command line (typer,
rich, uvicorn, the whole app) at the top, 2.4 s of CPU for each worker, which needs none of
it (issue 12). Importing the command line here, when it runs, spares the workers."""


def main() -> None:
    from services.processes.cli import app

    app()
