"""HTTP answers leave in one ``send()``: the fast twin of uvicorn's httptools protocol.

uvicorn's own ``HttpToolsProtocol`` is the plain path and the reference: it writes an answer's
head and its body apart, two system calls and two TCP segments, and the client wakes twice.
``OneWriteHttpTools`` is that protocol with its transport wrapped in ``OneWrite``, which joins
what is written within one turn of the event loop; on the wire the bytes are the same
(tests/integration/test_one_write_server.py compares the two). ``feedbackloop serve`` and
``feedbackloop api`` run it; nothing else needs to know it exists.
"""

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

PLAIN = HttpToolsProtocol  # the reference: what uvicorn runs when told nothing


class OneWrite:
    """A connection's transport whose writes within one turn of the event loop leave in one
    ``send()``. The head waits for the body only until the loop turns, so a streamed answer is
    held no longer than that; closing the connection sends what waits first."""

    __slots__ = ("_loop", "_transport", "_waiting")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._waiting: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not self._waiting:
            self._loop.call_soon(self._send)
        self._waiting.append(data)

    def _send(self) -> None:
        waiting, self._waiting = self._waiting, []
        if waiting and not self._transport.is_closing():
            self._transport.write(b"".join(waiting))

    def close(self) -> None:
        self._send()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)  # reading, its state, abort: as they are


class OneWriteHttpTools(HttpToolsProtocol):
    """uvicorn's httptools protocol writing each answer in one ``send()`` (``OneWrite``): what
    the HTTP commands hand uvicorn as ``http=``."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(OneWrite(transport, self.loop))  # type: ignore[arg-type]
