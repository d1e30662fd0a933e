"""``feedbackloop demo``: fill a fresh store with the demo scenario (services/processes/demo/)."""

import logging

import typer
from rich.progress import MofNCompleteColumn, Progress, TimeElapsedColumn

from services.processes import roles
from services.processes.bootstrap import Runtime
from services.processes.lifetime import console, process_settings, run_command

HELP = """Fill the store with a small company's two weeks, so every list of the API (and every
page of the console) has something to show a minute after cloning.

What it writes, all through the service's own routes, as the people who did it: three agents
of "AgenticOffice" with their maintainers; a charter; two weeks of feedback (ratings,
comments, a correction, an escalation); reports of every category and every wrong-answer kind,
triaged, resolved and declined by the Inbox reviewer; four eval cases lifted from reports,
confirmed and run against a stand-in agent this command serves on a local port; a dataset with
two versions; failed evaluations and the proposals they raise, one picked up; the night of the
following Monday and the digest of the second week.

Who is who (tenant 'dev'): mara.keller, jonas.weber, lea.fischer report (Requester);
sofia.brunner reviews the Inbox (Reviewer); tim.huber, nina.rossi and ali.demir maintain the
OfficeCoach, Billing and Onboarding agents (AssetMaintainer); olivia.meier runs the service
(Operator, PlatformAdmin). Their keys are written to demo-keys.json in the data directory, and
their entries with the development key's to demo-api-keys.json there.

The clock starts at Monday 2026-11-16 08:00 UTC and ids come from fixed keys, so every fresh
store gets the same data (the ids and times of the runs, and the keys, excepted). A second run
refuses (exit 1): the demo loads into a fresh store only. To start afresh, delete the data
directory (FEEDBACKLOOP_DATA_DIR, 'var' by default) while no process uses it.

Examples: `make demo && make run`, then sign in with the development key it prints;
`FEEDBACKLOOP_API_KEYS_FILE=var/demo-api-keys.json make run` to sign in as the people too."""


def demo() -> None:
    """Fill a fresh store with the demo scenario (see `feedbackloop demo --help`)."""
    from services.processes.demo.loading import API_KEYS_FILE, KEYS_FILE, AlreadyLoaded, load
    from services.processes.demo.scenario import STEPS, DemoRefused

    settings = process_settings()
    if settings.log_level.upper() == "INFO":
        # Each reader's start and each request would push the progress bar off the screen.
        logging.getLogger().setLevel(logging.WARNING)

    async def work(runtime: Runtime) -> str | None:
        columns = (*Progress.get_default_columns()[:-1], MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=console) as progress:
            bar = progress.add_task("demo", total=len(STEPS))

            def advance(title: str) -> None:
                progress.update(bar, advance=1, description=title)

            await load(runtime, settings.data_dir, advance)
        return runtime.dev_key

    try:
        dev_key = run_command(settings, roles.SERVE, work)
    except AlreadyLoaded:
        console.print(
            "The demo is loaded in this store already (tenant 'dev'); it is loaded into a fresh "
            f"store only. To start afresh, stop every process using {settings.data_dir} and "
            "delete that directory."
        )
        raise typer.Exit(1) from None
    except DemoRefused as refused:
        console.print(f"the demo stopped: {refused}")
        raise typer.Exit(1) from None
    console.print(
        f"The demo is loaded. The people's keys are in {settings.data_dir / KEYS_FILE}; run "
        f"with FEEDBACKLOOP_API_KEYS_FILE={settings.data_dir / API_KEYS_FILE} to sign in as them."
    )
    if dev_key:
        console.print(
            "Start the service with `make run` (or `feedbackloop serve`) and sign in with the "
            f"development key (tenant 'dev', every role): {dev_key}"
        )
