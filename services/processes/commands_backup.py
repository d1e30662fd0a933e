"""``feedbackloop backup`` and ``feedbackloop restore``: PostgreSQL's own continuous archiving
(a base backup by ``pg_basebackup``, the WAL copied by the server's ``archive_command``) and a
point-in-time restore from them, then the edge that restore leaves on Kafka (decisions D48,
D49; the runbook is docs/recovery.md)."""

import asyncio
import json
import os
import re
import shutil
import subprocess
import tarfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import typer
from rich.progress import DownloadColumn, Progress, TransferSpeedColumn

from services.kafka.divergence import Beyond
from services.processes.backup_retention import KEEP_DAYS, prune
from services.processes.bootstrap import Runtime
from services.processes.lifetime import console, process_settings, run_operator

HELP = (
    "Restore the store to a point in time from a base backup and the WAL archive, then deal "
    "with what Kafka holds beyond it. In order: prepare, start PostgreSQL on the prepared "
    "directory, start the service, check, acknowledge (docs/recovery.md)."
)
DEBIAN_PG_BIN = Path("/usr/lib/postgresql/15/bin")
BASE = "base.tar.gz"  # pg_basebackup -Ft -z: the cluster, its WAL inside (-X fetch)
PROGRESS = re.compile(rb"(\d+)/(\d+) kB")  # pg_basebackup --progress: "done/total kB (p%)"


def pg_tool(name: str) -> str:
    """A PostgreSQL client program: on PATH, else Debian's PostgreSQL 15."""
    found = shutil.which(name) or (
        DEBIAN_PG_BIN / name if (DEBIAN_PG_BIN / name).exists() else None
    )
    if found is None:
        raise typer.BadParameter(f"{name} not found: install postgresql-client-15")
    return str(found)


def libpq_url(database_url: str) -> str:
    """DATABASE_URL as libpq takes it (no ``+driver`` in the scheme)."""
    parts = urlsplit(database_url)
    return urlunsplit(parts._replace(scheme=parts.scheme.split("+", 1)[0]))


async def archiving(url: str) -> dict[str, str | None]:
    """The server's archiving settings, and the WAL segment it writes now: the base backup
    about to start needs none before it (``firstWal``, which the pruning keeps from)."""
    conn = await asyncpg.connect(url)
    try:
        names = ("archive_mode", "archive_command", "archive_timeout", "wal_level")
        said: dict[str, str | None] = {
            name: str(await conn.fetchval(f"SHOW {name}")) for name in names
        }
        said["firstWal"] = await conn.fetchval(
            "SELECT CASE WHEN pg_is_in_recovery() THEN NULL "
            "ELSE pg_walfile_name(pg_current_wal_lsn()) END"
        )
        return said
    finally:
        await conn.close()


def backup(
    to: Annotated[
        Path, typer.Option(help="Directory of the backups; this one goes to TO/base/UTC-TIME")
    ] = Path("var/backup"),
    keep_days: Annotated[
        int,
        typer.Option(
            min=1,
            help="Delete base backups that finished more than this many days ago (never the "
            "one just taken), and the archived WAL only they needed (docs/privacy.md)",
        ),
    ] = KEEP_DAYS,
    wal_archive: Annotated[
        Path | None,
        typer.Option(help="Where archive_command copies the WAL, to prune [TO/wal if it exists]"),
    ] = None,
) -> None:
    """Take a base backup of DATABASE_URL's PostgreSQL cluster (pg_basebackup), with a progress
    bar.

    A base backup alone restores to the moment it ended. Point-in-time restore also needs the
    WAL the server archives after it: set on the server **wal_level = replica**, **archive_mode
    = on**, **archive_command = 'test ! -f /backup/wal/%f && cp %p /backup/wal/%f'** and
    **archive_timeout = 60s** (at most a minute of WAL not yet archived: the RPO). This command
    warns when archiving is off. Take one base backup a day or so: a restore replays all the WAL
    since its base backup. Restore with **feedbackloop restore prepare** (docs/recovery.md).

    Once it is written, base backups older than **--keep-days** (30) and the archived WAL only
    they needed are deleted: an erased person's words leave every copy by then (decisions
    D144, docs/privacy.md).
    """
    settings = process_settings()
    if not settings.database_url:
        raise typer.BadParameter("backup takes DATABASE_URL: the embedded default is for trying")
    url = libpq_url(settings.database_url)
    try:
        server = asyncio.run(archiving(url))
    except (OSError, asyncpg.PostgresError) as error:
        console.print(f"PostgreSQL cannot be reached: {type(error).__name__}: {error}")
        raise typer.Exit(2) from None
    if server["archive_mode"] == "off":
        console.print(
            "warning: archive_mode is off on this server: this base backup restores only to "
            "the moment it ends, not to a point in time after it (see --help)"
        )
    started = datetime.now(UTC)
    target = to / "base" / started.strftime("%Y%m%dT%H%M%SZ")
    target.mkdir(parents=True)
    command = [pg_tool("pg_basebackup"), "-d", url, "-D", str(target), "-Ft", "-z", "-X", "fetch"]
    command += ["--checkpoint=fast", "--progress", "--label", f"feedbackloop {started:%FT%TZ}"]
    with Progress(*Progress.get_default_columns(), DownloadColumn(), TransferSpeedColumn(),
                  console=console) as progress:  # fmt: skip
        bar = progress.add_task("base backup", total=None)
        process = subprocess.Popen(command, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        assert process.stderr is not None
        said = b""
        said_to = process.stderr.fileno()
        for chunk in iter(lambda: os.read(said_to, 4096), b""):
            said += chunk
            if found := PROGRESS.findall(chunk):
                done, total = found[-1]
                progress.update(bar, completed=int(done) * 1024, total=int(total) * 1024)
        if process.wait():
            raise RuntimeError(f"pg_basebackup failed: {said.decode(errors='replace')[-2000:]}")
    finished = datetime.now(UTC)
    about = {"started": started.isoformat(), "finished": finished.isoformat(), **server}
    (target / "backup.json").write_text(json.dumps(about, indent=2) + "\n")
    size = sum(f.stat().st_size for f in target.iterdir())
    console.print(f"base backup: {target} ({size / 2**20:,.1f} MiB in {finished - started})")
    archive = wal_archive if wal_archive is not None else to / "wal"
    pruned = prune(to, archive, target, finished, keep_days)
    console.print(
        f"kept {keep_days} days: {len(pruned.backups)} older base backups and "
        f"{len(pruned.segments)} archived WAL files deleted"
        + ("" if archive.is_dir() else f" (no WAL archive at {archive}: none pruned)")
    )
    print(target)


def restore_prepare(
    backup_dir: Annotated[
        Path, typer.Option("--backup", help="A base backup's directory, TO/base/UTC-TIME")
    ],
    wal_archive: Annotated[
        Path, typer.Option(help="Where archive_command copied the WAL, e.g. /backup/wal")
    ],
    into: Annotated[
        Path, typer.Option(help="A new, empty data directory for the restored cluster")
    ],
    target_time: Annotated[
        datetime | None,
        typer.Option(
            help="Restore up to this moment (e.g. 2026-12-02T12:30:00+00:00; no zone: UTC) "
            "[everything the archive holds]",
            formats=["%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%dT%H:%M:%S.%f%z", "%Y-%m-%dT%H:%M:%S"],
        ),
    ] = None,
    owner: Annotated[
        str | None, typer.Option(help="The system user the server runs as, e.g. postgres")
    ] = None,
) -> None:
    """Prepare a data directory that PostgreSQL restores to a point in time when started.

    The base backup is unpacked into INTO (a progress bar), with a recovery.signal and, in
    postgresql.auto.conf, a restore_command reading the WAL archive, the recovery target and
    recovery_target_action = promote. Then start PostgreSQL on INTO (pg_ctl -D INTO start):
    it replays the archived WAL up to the target and opens for writes. Choose a target
    before the moment to undo; every commit after it is gone from the store, and the relay will
    find what it had published of them on Kafka (feedbackloop restore check).
    """
    base = backup_dir / BASE
    if not base.exists():
        raise typer.BadParameter(f"no {BASE} in {backup_dir}: not a base backup of this command")
    if not wal_archive.is_dir():
        raise typer.BadParameter(f"the WAL archive {wal_archive} is no directory")
    if into.exists() and any(into.iterdir()):
        raise typer.BadParameter(f"{into} is not empty: restore into a new directory")
    into.mkdir(parents=True, exist_ok=True)
    with tarfile.open(base) as archive, Progress(console=console) as progress:
        members = archive.getmembers()
        bar = progress.add_task("unpacking", total=sum(m.size for m in members))
        for member in members:
            archive.extract(member, into, filter="data")
            progress.advance(bar, member.size)
    (into / "recovery.signal").write_text("")
    settings = [f'restore_command = \'cp "{wal_archive.resolve()}/%f" "%p"\'']
    if target_time is not None:
        moment = target_time if target_time.tzinfo else target_time.replace(tzinfo=UTC)
        settings.append(f"recovery_target_time = '{moment.isoformat(sep=' ')}'")
    settings.append("recovery_target_action = 'promote'")
    with (into / "postgresql.auto.conf").open("a") as conf:
        conf.write("# feedbackloop restore prepare\n" + "\n".join(settings) + "\n")
    into.chmod(0o700)
    if owner:
        for path in (into, *into.rglob("*")):
            shutil.chown(path, owner, owner)
    console.print(f"prepared {into}; next: pg_ctl -D {into} start, then the service")
    print(into)


async def beyond_the_store(runtime: Runtime) -> list[Beyond]:
    if not runtime.settings.kafka_bootstrap_servers:
        raise typer.BadParameter("restore check takes KAFKA_BOOTSTRAP_SERVERS")
    return await runtime.divergence().beyond()


def restore_check() -> None:
    """List the records on the relay's topics whose events the store does not hold: what was
    published after the restore point. Exits 1 when there are any; while there are, the relay
    publishes nothing (feedbackloop status says "diverged")."""
    beyond = run_operator(process_settings(), beyond_the_store)
    show(beyond)
    if beyond:
        raise typer.Exit(1)


def restore_acknowledge(
    out: Annotated[
        Path, typer.Option(help="The records beyond the store, one JSON object a line")
    ] = Path("var/backup/beyond-the-store.jsonl"),
) -> None:
    """Record the records beyond the store as known, so that the relay publishes again.

    Before: tell the subscribers. Each record in OUT is an event they have and the store has
    lost; its CloudEvent id may come again on a different event (the aggregate's next event
    takes the lost one's version), so a subscriber that de-duplicates on ids must forget these
    ids. Redo from OUT what must not be lost (docs/recovery.md).
    """

    async def work(runtime: Runtime) -> int:
        beyond = await beyond_the_store(runtime)
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("a") as lines:
            lines.writelines(json.dumps(record.as_json()) + "\n" for record in beyond)
        return await runtime.divergence().acknowledge(beyond)

    count = run_operator(process_settings(), work)
    console.print(f"acknowledged {count} records beyond the store (written to {out})")


def show(beyond: list[Beyond]) -> None:
    from rich.table import Table

    table = Table("topic", "partition", "offset", "id", "subject", "time", "why")
    for r in beyond:
        table.add_row(r.topic, str(r.partition), str(r.offset), r.id, r.subject, r.time, r.why)
    if beyond:
        console.print(table)
    console.print(f"{len(beyond)} records on Kafka beyond the store")
