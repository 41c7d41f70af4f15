"""A scripted model server on 127.0.0.1: a host CLI sends its model requests here and gets replies from a
script instead of a model. Each host's module subclasses `ScriptedServer` with its own API's wire format;
this part only serves HTTP, records every request and hands out the script's turns in order."""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable


@dataclass
class Request:
    """One HTTP request the host made: method, path (with query), headers and the parsed JSON body."""
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes = field(repr=False, default=b"")

    def text(self) -> str:
        """The whole body as text, for 'did the model receive X' assertions."""
        return self.raw.decode("utf-8", "replace")


class ScriptedServer:
    """Serve `handle(request) -> (status, headers, chunks)` on 127.0.0.1 (an ephemeral port) in a thread.
    Use as a context manager; `url` is the base address; `requests` lists everything received."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep the test output clean
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                req = Request(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body, raw)
                with server.lock:
                    server.requests.append(req)
                    status, headers, chunks = server.handle(req)
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                streaming = headers.get("Content-Type", "").startswith("text/event-stream")
                if streaming:
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    for chunk in chunks:
                        data = chunk.encode() if isinstance(chunk, str) else chunk
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                else:
                    data = b"".join(c.encode() if isinstance(c, str) else c for c in chunks)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = _serve

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> "ScriptedServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def handle(self, request: Request) -> tuple[int, dict[str, str], Iterable[str | bytes]]:
        raise NotImplementedError


def sse(events: Iterable[tuple[str | None, Any]]) -> list[str]:
    """Server-sent events: (event name or None, JSON data) -> wire chunks."""
    out = []
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
    return out


Turn = Callable[[Request], Any]  # a scripted turn may look at the request (e.g. to assert what it carries)
