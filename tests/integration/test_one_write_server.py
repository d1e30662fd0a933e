"""uvicorn with ``services.processes.http_answer_writes.OneWriteHttpTools`` (what ``feedbackloop
api`` and ``serve`` run) over real sockets: answers whole and in order on a kept-alive
connection, pipelined requests, a streamed answer, and a connection the client asks to close;
and, byte for byte, the answers uvicorn's own httptools protocol (the plain path) gives."""

import asyncio
import re
from collections.abc import AsyncIterator

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from services.processes.http_answer_writes import PLAIN, OneWriteHttpTools
from tests.standin import served

pytestmark = pytest.mark.integration


async def echo(request: Request) -> Response:
    return PlainTextResponse(f"{request.url.path}:{(await request.body()).decode()}", 201)


async def streamed(_: Request) -> Response:
    async def parts() -> AsyncIterator[bytes]:
        for n in range(3):
            await asyncio.sleep(0.01)
            yield f"part {n};".encode()

    return StreamingResponse(parts(), media_type="text/plain")


APP = Starlette(routes=[Route("/echo/{n}", echo, methods=["POST"]), Route("/stream", streamed)])


PIPELINED = (
    b"".join(
        f"POST /echo/{n} HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\n{n}".encode()
        for n in range(3)
    )
    + b"GET /stream HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
)


async def exchanged(port: int) -> bytes:
    """Everything the server answers the pipelined requests, until it closes."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(PIPELINED)
    async with asyncio.timeout(10):
        answers = await reader.read()  # until the server closes, as the last request asked
    writer.close()
    return answers


@pytest.fixture
async def base() -> AsyncIterator[tuple[str, int]]:
    async with served(APP, http=OneWriteHttpTools) as port:
        yield "127.0.0.1", port


async def test_answers_on_a_kept_alive_connection_are_whole_and_in_order(
    base: tuple[str, int],
) -> None:
    host, port = base
    async with httpx.AsyncClient(base_url=f"http://{host}:{port}") as client:
        for n in range(20):
            answer = await client.post(f"/echo/{n}", content=f"body {n}")
            assert (answer.status_code, answer.text) == (201, f"/echo/{n}:body {n}")
        answer = await client.get("/stream")
        assert answer.text == "part 0;part 1;part 2;"
        assert answer.headers["transfer-encoding"] == "chunked"


async def test_pipelined_requests_are_answered_in_order(base: tuple[str, int]) -> None:
    answers = await exchanged(base[1])
    for n in range(3):
        assert f"/echo/{n}:{n}".encode() in answers
    assert answers.count(b"HTTP/1.1 201 Created\r\n") == 3
    assert answers.index(b"/echo/0:0") < answers.index(b"/echo/1:1") < answers.index(b"/echo/2:2")
    assert answers.endswith(b"0\r\n\r\n")  # the streamed answer's last chunk, then EOF
    assert b"part 2;" in answers


async def test_the_bytes_on_the_wire_are_the_plain_protocols() -> None:
    """The fast path changes how many ``send()`` calls carry an answer, never the answer."""

    def undated(answers: bytes) -> bytes:
        return re.sub(rb"date: [^\r]*\r\n", b"", answers)

    async with served(APP, http=PLAIN) as port:
        plain = await exchanged(port)
    async with served(APP, http=OneWriteHttpTools) as port:
        one_write = await exchanged(port)
    assert b"/echo/2:2" in plain
    assert undated(one_write) == undated(plain)
