"""The settings an operator may change while the service runs (SPEC C46, C47; decisions D152).

A running process cannot be handed a new environment, so "read afresh at each run" from the
environment alone changes nothing until a restart. ``FEEDBACKLOOP_RELOADABLE_SETTINGS_FILE``
names a file of ``NAME=value`` lines that a process reads again whenever it has changed (its
modification time, size or inode), at the next use of a setting: the learning proposals'
(``FEEDBACKLOOP_LEARNING_*``, read at each run of the generator) and the memory promotion
service's (``FEEDBACKLOOP_MEMORY_PROMOTION_*``, read at each share). A value in the file wins
over the environment's. Every other name is ignored and named in the log: those are read once,
at start, and the file must not look as if it changed them.

Read tolerantly, as the night's settings are: a line that does not parse is skipped and
named, a missing or unreadable file is the environment alone, so a typo while editing never
stops a process.
"""

import logging
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("feedbackloop")

# The names read at each use; only these may change while running.
RELOADABLE_PREFIXES = ("FEEDBACKLOOP_LEARNING_", "FEEDBACKLOOP_MEMORY_PROMOTION_")


@dataclass(frozen=True)
class Parsed:
    values: dict[str, str]
    ignored: tuple[str, ...]  # what was skipped, and why, for the log


def parse_reloadable(text: str) -> Parsed:
    """``NAME=value`` lines (blank lines and ``#`` comments skipped; the value as written,
    stripped, without quotes). Names that are not reloadable, and lines that do not parse,
    are left out and named."""
    values: dict[str, str] = {}
    ignored: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, equals, value = line.partition("=")
        name = name.strip()
        if not equals or not name or any(c.isspace() for c in name):
            ignored.append(f"line {number}: not NAME=value")
        elif not name.startswith(RELOADABLE_PREFIXES):
            ignored.append(f"{name}: read at start only (set it in the environment, restart)")
        else:
            values[name] = value.strip()
    return Parsed(values, tuple(ignored))


class ReloadableEnviron(Mapping[str, str]):
    """The environment with the reloadable file over it, the file read again once changed."""

    def __init__(self, base: Mapping[str, str], file: Path | None) -> None:
        self.base, self.file = base, file
        self._stamp: tuple[int, int, int] | None = None
        self._values: dict[str, str] = {}

    def current(self) -> Mapping[str, str]:
        """The file's values as it stands now (read again only when it changed)."""
        if self.file is None:
            return {}
        try:
            found = os.stat(self.file)
        except OSError:
            stamp = None
        else:
            stamp = (found.st_mtime_ns, found.st_size, found.st_ino)
        if stamp != self._stamp:
            self._stamp, self._values = stamp, self._read() if stamp else {}
        return self._values

    def _read(self) -> dict[str, str]:
        assert self.file is not None
        try:
            parsed = parse_reloadable(self.file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as error:
            log.warning("reloadable settings: %s unreadable (%s): environment only", self.file,
                        error)  # fmt: skip
            return {}
        for why in parsed.ignored:
            log.warning("reloadable settings: %s: ignored %s", self.file, why)
        log.info("reloadable settings: read %s (%s)", self.file, ", ".join(parsed.values) or "none")
        return parsed.values

    def __getitem__(self, name: str) -> str:
        overlay = self.current()
        return overlay[name] if name in overlay else self.base[name]

    def __iter__(self) -> Iterator[str]:
        return iter({**self.base, **self.current()})

    def __len__(self) -> int:
        return len({**self.base, **self.current()})
