"""A real local HTTP server standing in for MemoryPromotionService's consent check (SPEC C17)."""

import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Answer = Callable[[dict[str, Any]], tuple[int, dict[str, Any]]]


@contextlib.contextmanager
def consent_service(answer: Answer) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Serves ``POST /v1/consent-checks``: each question (the JSON body) goes to ``answer``,
    whose (status, body) is answered. Yields the base URL and the questions asked so far."""
    asked: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            question = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.path != "/v1/consent-checks":
                status, body = 404, {"error": "not-found"}
            else:
                asked.append(question)
                status, body = answer(question)
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", asked
    finally:
        server.shutdown()
        server.server_close()
