"""How long backups keep what an erasure removed, and the pruning that bounds it (decisions
D144; docs/privacy.md, "Backups and WAL").

A base backup holds the database as it was (the data keys, and the read models' plain text);
the archived WAL after it holds every change since. An erasure cannot reach into either, so
they are kept no longer than ``KEEP_DAYS``: each ``feedbackloop backup``, once its own base
backup is written, deletes the base backups that finished more than ``KEEP_DAYS`` ago (never
the one just taken) and the archived WAL segments older than the first one the oldest kept
backup needs, as ``pg_archivecleanup`` would. Pure file work: no server is asked.
"""

import json
import re
import shutil
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

KEEP_DAYS = 30
# The server settings shipped (compose.yaml, ``make up``, docs/recovery.md) that bound how
# long ``pg_wal`` keeps a segment: closed within ``archive_timeout``, deleted at the end of
# the next checkpoint, none kept back (``wal_keep_size``) nor renamed for reuse with its old
# bytes (``wal_recycle``).
SHIPPED_WAL = {
    "archive_timeout": "60s",
    "checkpoint_timeout": "5min",
    "max_wal_size": "1GB",
    "wal_keep_size": "0",
    "wal_recycle": "off",
}
CHECKPOINT_COMPLETION_TARGET = 0.9  # PostgreSQL's default, not set


def pg_wal_bound(settings: dict[str, str]) -> timedelta:
    """At most how long ``pg_wal`` holds what was written at one moment (the erasure's own
    WAL, the latest to hold the person's data): the segment's closing, the next checkpoint's
    start, and its end, when the segments before its start go."""
    closed = seconds(settings["archive_timeout"])
    checkpoint = seconds(settings["checkpoint_timeout"])
    return timedelta(seconds=closed + checkpoint * (1 + CHECKPOINT_COMPLETION_TARGET))


def seconds(setting: str) -> int:
    """A PostgreSQL duration as the settings above write it (``60s``, ``5min``, ``1h``)."""
    found = re.fullmatch(r"(\d+)(s|min|h)", setting)
    if found is None:
        raise ValueError(f"not a duration this module reads: {setting!r}")
    return int(found.group(1)) * {"s": 1, "min": 60, "h": 3600}[found.group(2)]


ABOUT = "backup.json"  # what ``feedbackloop backup`` writes beside each base backup
# A WAL segment's name: timeline, then log and segment, 8 hex digits each; an archive also
# holds ``.partial`` and ``.backup`` files named after one, and timeline ``.history`` files.
SEGMENT = re.compile(r"([0-9A-F]{8})([0-9A-F]{16})(\.partial|\.[0-9A-F]{8}\.backup)?")


@dataclass(frozen=True)
class Kept:
    """A base backup written by ``feedbackloop backup``: its directory, when it finished, and
    the first WAL segment it needs (None when the server could not say, before D144)."""

    path: Path
    finished: datetime
    first_wal: str | None


@dataclass(frozen=True)
class Pruned:
    backups: list[Path]
    segments: list[str]


def base_backups(base: Path) -> list[Kept]:
    """The base backups under ``base`` (``TO/base``) that say when they finished, oldest
    first; anything else there is not ours and is left alone."""
    if not base.is_dir():
        return []
    found = [read_kept(path) for path in sorted(base.iterdir()) if (path / ABOUT).is_file()]
    return sorted((kept for kept in found if kept is not None), key=lambda k: k.finished)


def read_kept(path: Path) -> Kept | None:
    try:
        about = json.loads((path / ABOUT).read_text())
        finished = datetime.fromisoformat(about["finished"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    first = about.get("firstWal")
    named = isinstance(first, str) and SEGMENT.fullmatch(first) is not None
    return Kept(path, finished, first if named else None)


def expired(backups: list[Kept], now: datetime, keep_days: int, newest: Path) -> list[Kept]:
    """The backups that finished more than ``keep_days`` before ``now``; never ``newest``,
    the one just taken, so that one restorable backup always remains."""
    limit = now - timedelta(days=keep_days)
    return [kept for kept in backups if kept.finished < limit and kept.path != newest]


def unneeded_segments(names: list[str], first_needed: str) -> list[str]:
    """The archived WAL files that come before ``first_needed`` (timelines aside, as
    ``pg_archivecleanup`` compares them); ``.history`` files stay, a restore reads them."""
    return sorted(
        name
        for name in names
        if (found := SEGMENT.fullmatch(name)) and found.group(2) < first_needed[8:24]
    )


def prune(
    to: Path, wal_archive: Path | None, newest: Path, now: datetime, keep_days: int
) -> Pruned:
    """Delete the expired base backups under ``to/base`` and, in ``wal_archive``, the WAL
    no kept backup needs. Answers what went."""
    backups = base_backups(to / "base")
    gone = expired(backups, now, keep_days, newest)
    for kept in gone:
        shutil.rmtree(kept.path)
    remaining = [kept for kept in backups if kept not in gone]
    firsts = [kept.first_wal for kept in remaining]
    segments: list[str] = []
    # Only when every kept backup says what it needs: otherwise any segment may be needed.
    if wal_archive is not None and wal_archive.is_dir() and firsts and None not in firsts:
        first_needed = min(name[8:24] for name in firsts if name is not None)
        names = [path.name for path in wal_archive.iterdir()]
        segments = unneeded_segments(names, "0" * 8 + first_needed)
        for name in segments:
            (wal_archive / name).unlink()
    return Pruned([kept.path for kept in gone], segments)
