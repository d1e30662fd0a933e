"""A real local HTTP endpoint for tests of outgoing webhooks."""

import contextlib
import threading
from collections.abc import Callable, Iterator
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextlib.contextmanager
def webhook_endpoint(answer: Callable[[bytes, Message], int], port: int = 0) -> Iterator[str]:
    """Serves POSTs on ``port`` (a free one if 0): each raw body and its headers go to
    ``answer``, whose return is the status answered. Yields ``http://127.0.0.1:<port>``."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(answer(body, self.headers))
            self.end_headers()

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
