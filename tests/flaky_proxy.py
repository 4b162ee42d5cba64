# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A loopback HTTP proxy in front of an S3 endpoint that answers ``503 SlowDown`` on purpose.

Real S3 throttles and has 5xx blips; this puts them between s3fs and moto's server so the
whole client stack (botocore's and s3fs's retries, then ours) runs against real HTTP errors.
Requests are forwarded byte for byte with their headers, so SigV4 signatures stay valid.
"""

from __future__ import annotations

import http.client
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SLOWDOWN = (
    b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code>'
    b"<Message>Please reduce your request rate.</Message></Error>"
)


class FlakyProxy:
    """Forward to ``127.0.0.1:upstream``; a GET whose path contains ``match`` is refused with
    503 SlowDown the first ``failures`` times each path is asked for (``None``: always).
    ``freeze=True``: those GETs get no answer at all (a silent endpoint), until ``close``."""

    def __init__(self, upstream: int, match: str, failures: int | None, freeze: bool = False):
        self.refused = 0
        self._released = threading.Event()
        self._seen: dict[str, int] = {}
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def forward(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.command == "GET" and match in self.path and proxy._refuse(self.path):
                    if freeze:  # hold the connection, answer nothing
                        proxy._released.wait(120)
                        self.close_connection = True
                        return None
                    return self.reply(503, {"Content-Type": "application/xml"}, SLOWDOWN)
                conn = http.client.HTTPConnection("127.0.0.1", upstream, timeout=30)
                conn.request(self.command, self.path, body=body, headers=dict(self.headers))
                response = conn.getresponse()
                data = response.read()
                conn.close()
                skip = {"content-length", "transfer-encoding", "connection"}
                headers = {k: v for k, v in response.getheaders() if k.lower() not in skip}
                self.reply(response.status, headers, b"" if self.command == "HEAD" else data)

            def reply(self, status, headers, data):
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = forward

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address):  # clients that hang up: fine
                pass

        self._failures = failures
        self._server = Server(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def _refuse(self, path: str) -> bool:
        with self._lock:
            self._seen[path] = asked = self._seen.get(path, 0) + 1
            refuse = self._failures is None or asked <= self._failures
            self.refused += refuse
            return refuse

    def close(self) -> None:
        self._released.set()
        self._server.shutdown()
        self._server.server_close()
