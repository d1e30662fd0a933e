"""``feedbackloop backup`` and ``restore prepare`` refuse what cannot work, naming it, before
they touch anything (decisions D48); the drill (tests/e2e/test_restore_drill.py) runs them for
real."""

import tarfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from services.processes import cli
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
