"""``services.processes.http_answer_writes.OneWrite``: what uvicorn writes within one turn of the
loop leaves in one ``send()``, in order, and nothing is lost or sent after the connection
closes. The transport below is our own recording stand-in for the socket's."""

import asyncio
from typing import Any

import pytest

from services.processes.http_answer_writes import OneWrite

pytestmark = pytest.mark.unit


class Recorded:
    """A transport that keeps what it was asked to do."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.closing = False

    def write(self, data: bytes) -> None:
        assert not self.closing, "written after close"
        self.calls.append(("write", data))

    def close(self) -> None:
        self.closing = True
        self.calls.append(("close", None))

    def is_closing(self) -> bool:
        return self.closing

    def pause_reading(self) -> None:
        self.calls.append(("pause_reading", None))


async def a_turn() -> None:
    await asyncio.sleep(0)
    await asyncio.sleep(0)


async def test_a_head_and_its_body_leave_in_one_write_once_the_loop_turns() -> None:
    recorded = Recorded()
    corked = OneWrite(recorded, asyncio.get_running_loop())  # type: ignore[arg-type]
    corked.write(b"HTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\n")
    corked.write(b"{}")
    assert recorded.calls == []  # held until this turn of the loop is over
    await a_turn()
    assert recorded.calls == [("write", b"HTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\n{}")]


async def test_writes_of_later_turns_are_sent_in_order_each_in_its_turn() -> None:
    recorded = Recorded()
    corked = OneWrite(recorded, asyncio.get_running_loop())  # type: ignore[arg-type]
    corked.write(b"head")
    await a_turn()
    corked.write(b"chunk 1")
    await a_turn()
    corked.write(b"chunk 2")
    corked.write(b"end")
    await a_turn()
    assert recorded.calls == [("write", b"head"), ("write", b"chunk 1"), ("write", b"chunk 2end")]


async def test_closing_sends_what_waits_first() -> None:
    recorded = Recorded()
    corked = OneWrite(recorded, asyncio.get_running_loop())  # type: ignore[arg-type]
    corked.write(b"head")
    corked.write(b"body")
    corked.close()
    await a_turn()  # the flush scheduled for this turn finds nothing left to send
    assert recorded.calls == [("write", b"headbody"), ("close", None)]


async def test_nothing_is_written_to_a_connection_already_closing() -> None:
    recorded = Recorded()
    corked = OneWrite(recorded, asyncio.get_running_loop())  # type: ignore[arg-type]
    corked.write(b"late")
    recorded.closing = True  # the peer went away meanwhile
    await a_turn()
    assert recorded.calls == []


async def test_everything_else_is_the_transports_own() -> None:
    recorded = Recorded()
    corked = OneWrite(recorded, asyncio.get_running_loop())  # type: ignore[arg-type]
    corked.pause_reading()
    assert corked.is_closing() is False
    assert recorded.calls == [("pause_reading", None)]
