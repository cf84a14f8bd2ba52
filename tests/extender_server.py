"""A scheduler extender for the tests: an HTTP(S) server on 127.0.0.1 in a
thread, whose verbs the test programs.

    server.on("filter", lambda args: {"NodeNames": [...], "FailedNodes": {...}})
    server.on("prioritize", lambda args: [{"Host": "n1", "Score": 7}])
    server.on("filter", Reply(500))                 # a status code, no body
    server.on("filter", Reply(200, b"not json"))    # a raw body

Every request is kept (`server.requests`: (verb, decoded body, headers)).
A handler may block on `server.release` (an Event set when the server
stops) to outlast the client's timeout.
"""

from __future__ import annotations

import json
import ssl
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""


class _Handler(BaseHTTPRequestHandler):
    server_version = "test-extender"

    def log_message(self, *args):  # quiet
        pass

    def do_POST(self):  # noqa: N802 (http.server's name)
        ext = self.server.extender
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        verb = self.path.rstrip("/").rsplit("/", 1)[-1]
        try:
            args = json.loads(raw)
        except ValueError:
            args = raw
        ext.requests.append((verb, args, dict(self.headers)))
        handler = ext.handlers.get(verb)
        if handler is None:
            reply = Reply(404, b"no such verb")
        elif isinstance(handler, Reply):
            reply = handler
        else:
            value = handler(args)
            reply = value if isinstance(value, Reply) else Reply(200, json.dumps(value).encode())
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)
        except OSError:
            pass  # the client gave up (timeout tests)


class ExtenderServer:
    def __init__(self, tls=None, prefix: str = "/scheduler"):
        self.handlers: dict = {}
        self.requests: list = []
        self.release = threading.Event()
        self.prefix = prefix
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.extender = self
        self.scheme = "http"
        if tls is not None:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(str(tls.server_cert), str(tls.server_key))
            self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
            self.scheme = "https"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"{self.scheme}://{host}:{port}{self.prefix}"

    def on(self, verb: str, handler) -> "ExtenderServer":
        self.handlers[verb] = handler
        return self

    def verbs(self) -> list[str]:
        return [verb for verb, _, _ in self.requests]

    def start(self) -> "ExtenderServer":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
