"""A one-node KRaft Kafka broker from Maven Central jars, on loopback ports chosen at run time.

The jars are fetched once with Maven (ops/kafka/pom.xml), the broker runs on a JDK 17
(recipe: shared/LOCAL_SERVICES.md); `start_kafka` returns once the broker serves a Metadata
request. Standard library only; nothing here imports aiokafka.
"""

from __future__ import annotations

import base64
import fcntl
import glob
import hashlib
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from local_processes import _cmdline, _log, _pid_alive, _tail, free_port

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
