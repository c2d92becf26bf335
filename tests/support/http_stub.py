"""Stub HTTP servers for tests that need a misbehaving or scripted peer: a request handler
base with the plumbing, and a context manager that serves one on a free loopback port."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class StubHandler(BaseHTTPRequestHandler):
    """Keep-alive HTTP/1.1, silent; subclasses write `do_POST` with `body()` and `answer()`."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in separate writes

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length", "0")))

    def answer(
        self, status: int, body: bytes, content_type: str = "application/json", headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        for name, value in {"Content-Type": content_type, **(headers or {})}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def drop(self) -> None:
        """Close the connection without an answer."""
        self.close_connection = True
        self.connection.close()


@contextmanager
def serving_stub(handler: type[BaseHTTPRequestHandler], *, quiet_client_errors: bool = False) -> Iterator[str]:
    """Serve `handler` on 127.0.0.1 (a free port) in a thread; yields the base URL, without a
    final slash. `quiet_client_errors`: a client that vanishes mid-request is no error to report."""

    class Server(ThreadingHTTPServer):
        daemon_threads = True

        def handle_error(self, request: Any, client_address: Any) -> None:
            if not quiet_client_errors:
                super().handle_error(request, client_address)

    server = Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@contextmanager
def plain_web_server(folder: Path) -> Iterator[str]:
    """Python's own file server over `folder`, as someone runs it: a web server that is no
    NEAR node (it answers POSTs with a 501 HTML page). Yields the base URL with a final slash."""

    class Files(SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(folder), **kwargs)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with serving_stub(Files) as url:
        yield url + "/"
