"""The audit's rows as PostgreSQL's binary COPY reads them, written out when each decision is
recorded (decisions D310).

asyncpg's ``copy_records_to_table`` encodes every cell of every row through its general
codecs: each array is walked by type checks against the collection ABCs, each text, each
timestamp on its own. The audit's rows repeat most of what they hold (who decided: the
tenant, the actor, the roles, whether a service; what was decided: the command, the result,
the reason, the door, how many items), so that part of a row is encoded once and kept
(``Heads``), and only what each row has of its own (when, the command id, the aggregates)
is encoded per row. The format is PostgreSQL's (the "Binary Format" of COPY, each value as
its type's ``*_send`` writes it); ``tests/integration/test_audit_encoding.py`` reads every
column back against the same values written by asyncpg's own codecs.
"""

import functools
import struct
from collections.abc import AsyncIterator, Iterable
from datetime import UTC, datetime, timedelta
from uuid import UUID

# The order of the cells in a row: the kept head first, then each row's own.
COLUMNS = (
    "tenant_id", "actor", "roles", "service", "command", "result", "reason", "door", "items",
    "at", "command_id", "aggregates",
)  # fmt: skip
HEADER = b"PGCOPY\n\xff\r\n\x00" + struct.pack("!ii", 0, 0)  # signature, flags, no extension
TRAILER = struct.pack("!h", -1)
TEXT_OID, UUID_OID = 25, 2950

_INT16 = struct.Struct("!h")
_INT32 = struct.Struct("!i")
_NULL = _INT32.pack(-1)
_BOOL = (b"\x00\x00\x00\x01\x00", b"\x00\x00\x00\x01\x01")
_ITEMS = struct.Struct("!ii")  # length 4, the integer
_AT_TEXT = struct.Struct("!iqi")  # length 8, microseconds since 2000-01-01 UTC; a text's length
_PG_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
_EMPTY_UUIDS = struct.pack("!iiiI", 12, 0, 0, UUID_OID)  # no dimensions
_UUIDS_HEAD = struct.Struct("!iiiIii")  # length, one dimension, no nulls, oid, size, from 1
_UUID_CELL = _INT32.pack(16)
_ONE_UUID = _UUIDS_HEAD.pack(40, 1, 0, UUID_OID, 1, 1) + _UUID_CELL
_MICROSECOND = timedelta(microseconds=1)
# Heads kept at most; past it they are made again as rows ask (a tenant's callers and
# commands are far fewer).
HEADS_KEPT = 10_000


def text_bytes(value: str) -> bytes:
    """``value`` as PostgreSQL's text takes it: UTF-8, with what it refuses (a NUL, a lone
    surrogate) replaced by U+FFFD (a surrogate by ``?``), so that no row can fail the COPY of
    every other one (decisions D311)."""
    try:
        data = value.encode()
    except UnicodeEncodeError:
        data = value.encode(errors="replace")
    return data.replace(b"\x00", "\ufffd".encode()) if b"\x00" in data else data


def text_cell(value: str | None) -> bytes:
    if value is None:
        return _NULL
    data = text_bytes(value)
    return _INT32.pack(len(data)) + data


def texts_cell(values: Iterable[str]) -> bytes:
    """A ``text[]``: one dimension, or none when empty (as ``'{}'`` is stored)."""
    cells = [text_cell(value) for value in values]
    if not cells:
        return struct.pack("!iiiI", 12, 0, 0, TEXT_OID)
    data = struct.pack("!iiIii", 1, 0, TEXT_OID, len(cells), 1) + b"".join(cells)
    return _INT32.pack(len(data)) + data


def uuids_cell(ids: list[UUID]) -> bytes:
    """A ``uuid[]`` (a single command's one id is written by ``row`` itself)."""
    if not ids:
        return _EMPTY_UUIDS
    cell = _UUID_CELL
    return _UUIDS_HEAD.pack(20 + 20 * len(ids), 1, 0, UUID_OID, len(ids), 1) + b"".join(
        [cell + id.bytes for id in ids]
    )


@functools.lru_cache(maxsize=1024)
def listed(roles: frozenset[str] | None) -> tuple[str, ...]:
    """A caller's roles as the row holds them, sorted."""
    return tuple(sorted(roles or ()))


# Who decided (tenant, actor, roles, service) and what (command, result, reason, door, items).
Head = tuple[str, str, frozenset[str] | None, bool, str, str, str | None, str | None, int]


class Heads:
    """The encoded head of a row (its field count, then who and what), made once per head:
    ``heads.kept.get(head) or heads.make(head)``."""

    def __init__(self) -> None:
        self.kept: dict[Head, bytes] = {}

    def make(self, head: Head) -> bytes:
        tenant_id, actor, roles, service, command, result, reason, door, items = head
        data = b"".join(
            (
                _INT16.pack(len(COLUMNS)), text_cell(tenant_id), text_cell(actor),
                texts_cell(listed(roles)), _BOOL[bool(service)], text_cell(command),
                text_cell(result), text_cell(reason), text_cell(door), _ITEMS.pack(4, items),
            )
        )  # fmt: skip
        if len(self.kept) >= HEADS_KEPT:
            self.kept.clear()
        self.kept[head] = data
        return data


def row(head: bytes, at: datetime, command_id: str, aggregates: list[UUID]) -> bytes:
    """One row: its head (``Heads``), then the cells it has of its own (when, a
    ``timestamptz``; the command id; the aggregates), in as few steps as a row can take: it is
    made for every decision, on the event loop."""
    if at.tzinfo is None:  # the machine's local time, as asyncpg and ``astimezone`` take it
        at = at.astimezone(UTC)
    try:
        command = command_id.encode()
    except UnicodeEncodeError:
        command = text_bytes(command_id)
    if b"\x00" in command:
        command = text_bytes(command_id)
    ids = _ONE_UUID + aggregates[0].bytes if len(aggregates) == 1 else uuids_cell(aggregates)
    return head + _AT_TEXT.pack(8, (at - _PG_EPOCH) // _MICROSECOND, len(command)) + command + ids


async def copy_data(rows: list[bytes]) -> AsyncIterator[bytes]:
    """What ``COPY … FROM STDIN (FORMAT binary)`` reads: the header, the rows, the trailer,
    in one piece."""
    yield b"".join((HEADER, *rows, TRAILER))
