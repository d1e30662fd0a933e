"""``feedbackloop backup`` and ``restore prepare`` refuse what cannot work, naming it, before
they touch anything (decisions D48); the drill (tests/e2e/test_restore_drill.py) runs them for
real."""

import importlib.util
import json
import math
import tarfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from services.processes import cli
from services.processes.backup_retention import KEEP_DAYS, SHIPPED_WAL, pg_wal_bound, prune
from services.processes.commands_backup import PROGRESS, libpq_url


def prepare(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli.app, ["restore", "prepare", *args], env={"COLUMNS": "400"})
    return result.exit_code, result.output


def test_a_backup_needs_a_database_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("FEEDBACKLOOP_DATABASE_URL", raising=False)
    result = CliRunner().invoke(cli.app, ["backup", "--to", "/nonexistent"])
    assert result.exit_code == 2
    assert "DATABASE_URL" in result.output


def test_restore_prepare_refuses_a_directory_that_holds_no_base_backup(tmp_path: Path) -> None:
    code, said = prepare(
        "--backup", str(tmp_path), "--wal-archive", str(tmp_path), "--into", str(tmp_path / "n")
    )
    assert code == 2
    assert "base.tar.gz" in said
    assert not (tmp_path / "n").exists()


def test_restore_prepare_never_writes_into_a_directory_in_use(tmp_path: Path) -> None:
    backup, into = tmp_path / "backup", tmp_path / "data"
    backup.mkdir()
    with tarfile.open(backup / "base.tar.gz", "w:gz"):
        pass
    into.mkdir()
    (into / "PG_VERSION").write_text("15\n")
    code, said = prepare(
        "--backup", str(backup), "--wal-archive", str(tmp_path), "--into", str(into)
    )
    assert code == 2
    assert "not empty" in said
    assert sorted(p.name for p in into.iterdir()) == ["PG_VERSION"]


def test_restore_prepare_writes_the_recovery_settings_for_the_target(tmp_path: Path) -> None:
    backup, wal, into = tmp_path / "backup", tmp_path / "wal", tmp_path / "data"
    backup.mkdir()
    wal.mkdir()
    (tmp_path / "PG_VERSION").write_text("15\n")
    with tarfile.open(backup / "base.tar.gz", "w:gz") as archive:
        archive.add(tmp_path / "PG_VERSION", arcname="PG_VERSION")
    code, said = prepare(
        "--backup", str(backup), "--wal-archive", str(wal), "--into", str(into),
        "--target-time", "2026-12-02T12:30:00+00:00",
    )  # fmt: skip
    assert code == 0, said
    assert (into / "PG_VERSION").read_text() == "15\n"
    assert (into / "recovery.signal").exists()
    conf = (into / "postgresql.auto.conf").read_text()
    assert f'restore_command = \'cp "{wal}/%f" "%p"\'' in conf
    assert "recovery_target_time = '2026-12-02 12:30:00+00:00'" in conf
    assert "recovery_target_action = 'promote'" in conf


def test_the_progress_of_pg_basebackup_is_read_from_its_lines() -> None:
    line = b"  12345/67890 kB (18%), 0/1 tablespace\r"
    assert PROGRESS.findall(line) == [(b"12345", b"67890")]


def test_a_driver_in_the_database_url_is_dropped_for_libpq() -> None:
    assert libpq_url("postgresql+asyncpg://u@h:5/d") == "postgresql://u@h:5/d"


def test_a_backup_of_a_server_that_does_not_answer_says_so_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://postgres@127.0.0.1:9/none")
    result = CliRunner().invoke(cli.app, ["backup", "--to", "/nonexistent"])
    assert result.exit_code == 2
    assert "PostgreSQL cannot be reached" in result.output


def taken(to: Path, finished: datetime, first_wal: str | None) -> Path:
    """A base backup as ``feedbackloop backup`` leaves it."""
    path = to / "base" / finished.strftime("%Y%m%dT%H%M%SZ")
    path.mkdir(parents=True)
    (path / "base.tar.gz").write_bytes(b"the cluster")
    about = {"started": finished.isoformat(), "finished": finished.isoformat()}
    (path / "backup.json").write_text(json.dumps({**about, "firstWal": first_wal}))
    return path


def test_backups_and_archived_wal_older_than_the_retention_are_deleted(tmp_path: Path) -> None:
    """Decisions D144: what an erasure cannot reach leaves every copy within the retention.
    The newest backup always stays, and WAL a kept backup needs stays."""
    now = datetime(2026, 12, 5, 3, tzinfo=UTC)
    old = taken(tmp_path, now - timedelta(days=45), "000000010000000000000002")
    kept = taken(tmp_path, now - timedelta(days=10), "000000010000000000000009")
    newest = taken(tmp_path, now, "00000002000000000000000C")
    wal = tmp_path / "wal"
    wal.mkdir()
    names = [
        "000000010000000000000002",
        "000000010000000000000002.00000028.backup",
        "000000010000000000000008",
        "000000010000000000000009",
        "00000002000000000000000C.partial",
        "00000002.history",
    ]
    for name in names:
        (wal / name).write_bytes(b"wal")
    (tmp_path / "base" / "not-ours").mkdir()

    pruned = prune(tmp_path, wal, newest, now, keep_days=30)

    assert pruned.backups == [old]
    assert not old.exists()
    assert kept.exists()
    assert newest.exists()
    assert (tmp_path / "base" / "not-ours").exists()
    assert pruned.segments == names[:3]
    assert sorted(p.name for p in wal.iterdir()) == sorted(names[3:])


def test_the_newest_backup_stays_however_old_and_unknown_needs_keep_the_wal(
    tmp_path: Path,
) -> None:
    now = datetime(2026, 12, 5, tzinfo=UTC)
    before = taken(tmp_path, now - timedelta(days=90), None)  # taken before D144: needs unknown
    only = taken(tmp_path, now - timedelta(days=60), "000000010000000000000009")
    wal = tmp_path / "wal"
    wal.mkdir()
    (wal / "000000010000000000000001").write_bytes(b"wal")
    assert prune(tmp_path, wal, only, now, keep_days=30).backups == [before]
    assert only.exists()
    assert (wal / "000000010000000000000001").exists() is False  # only `only` is left: known

    again = taken(tmp_path, now - timedelta(days=1), None)
    (wal / "000000010000000000000002").write_bytes(b"wal")
    assert prune(tmp_path, wal, again, now, keep_days=30).segments == []  # `again`'s unknown


def test_the_shipped_wal_settings_are_one_and_bound_pg_wal_as_the_privacy_page_says() -> None:
    """docs/privacy.md's bound is computed from the settings shipped in compose.yaml and by
    ``make up`` (ops/localservers.py): a change to one of them fails here until the page
    says the new bound."""
    root = Path(__file__).parents[2]
    compose = yaml.safe_load((root / "compose.yaml").read_text())
    command = compose["services"]["postgres"]["command"]
    given = dict(part.split("=", 1) for part in command[2::2])
    assert given == SHIPPED_WAL
    spec = importlib.util.spec_from_file_location("local_postgres", root / "ops/local_postgres.py")
    assert spec is not None
    assert spec.loader is not None
    local_postgres = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(local_postgres)
    assert local_postgres.BOUNDED_WAL == SHIPPED_WAL
    minutes = math.ceil(pg_wal_bound(SHIPPED_WAL).total_seconds() / 60)
    privacy = (root / "docs/privacy.md").read_text()
    assert f"**{minutes} minutes** after the erasure" in privacy
    assert f"**{KEEP_DAYS + 1} days**" in privacy
    recovery = (root / "docs/recovery.md").read_text()
    for name, value in SHIPPED_WAL.items():
        assert f"{name} = {value}" in recovery or f"`{name} = {value}`" in privacy, name
