#!/usr/bin/env python3
"""Real Kafka and PostgreSQL on this machine, without Docker.

Why: the dev and CI machines have no container engine, but they do have OpenJDK 17,
Maven and Debian's PostgreSQL 15 (recipe: shared/LOCAL_SERVICES.md). local_kafka.py starts
a one-node KRaft Kafka broker from Maven Central jars and local_postgres.py a throwaway
PostgreSQL cluster, both on loopback ports chosen at run time; this module is their CLI.

Library (tests)::

    kafka = local_kafka.start_kafka(tmp / "kafka")    # KafkaServer(bootstrap="127.0.0.1:PORT", ...)
    pg = local_postgres.start_postgres(tmp / "pg")    # PostgresServer(url="postgresql://...", ...)
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
import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

from local_kafka import (
    DEFAULT_KAFKA_LIB,
    KafkaServer,
    ensure_kafka_jars,
    kafka_metadata_brokers,
    start_kafka,
)
from local_postgres import PostgresServer, start_postgres
from local_processes import _log


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
