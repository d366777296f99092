"""A fault-injecting HTTP/1.1 proxy for the fault tests (``tests/test_faults.py``).

A real TCP server on 127.0.0.1 in front of one upstream (moto, an Iceberg REST server): the
client under test talks HTTP to it as it would to the store, and the proxy forwards each
request to the upstream unless a rule says otherwise. Rules, set by the test:

- ``status``: answer the request itself (e.g. ``503 SlowDown`` with S3's XML error body)
  without forwarding it: the store refused, nothing was applied;
- ``drop``: forward the request and read the upstream's answer, then close the client's
  connection without answering: the server applied the request, the client saw nothing;
- ``hold``: keep the request until the test releases it, then forward it (if the upstream
  is gone by then, the client's connection is closed without an answer).

A rule matches by method and a regular expression on the path (query excluded), for its
next ``count`` requests or for ``seconds`` from when it is set (or both: whichever ends
first), else forever. The first matching rule applies.

It runs in its own process (``python tests/faultproxy.py HOST:PORT`` prints the port it
listens on), so that a client that blocks the Python interpreter cannot block the proxy.
The test drives it over HTTP on the same port, under ``/__fault__/``: ``POST rules`` adds a
rule (JSON), ``POST clear`` removes them and releases held requests, ``POST release``
releases held requests, ``GET stats`` gives counts and a log of ``[method, path, what,
status]`` (the status the client got, 0 for none).

Every answer the proxy relays is sent with ``Connection: close`` and the connection is then
closed, so a client never reuses a connection the proxy is about to close (which it would
see as a failure the test did not inject).
"""

from __future__ import annotations

import json
import re
import socket
import socketserver
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

S3_SLOW_DOWN = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
    "<Message>Please reduce your request rate.</Message><RequestId>faultproxy</RequestId></Error>"
)


class _State:
    def __init__(self, upstream: tuple[str, int]):
        self.upstream = upstream
        self.lock = threading.Condition()
        self.rules: list[dict] = []
        self.generation = 0  # bumped by release: held requests wait for a change
        self.held = 0
        self.requests = 0
        self.log: list[list[str]] = []

    def add(self, rule: dict) -> None:
        rule = dict(rule)
        if "seconds" in rule:
            rule["until"] = time.monotonic() + float(rule.pop("seconds"))
        rule.setdefault("action", "status")
        with self.lock:
            self.rules.append(rule)

    def match(self, method: str, path: str) -> tuple[dict | None, list]:
        """The rule for this request (its count taken), or None to forward it; and its
        log entry, to which the handler adds the status the client got (0: none)."""
        now = time.monotonic()
        with self.lock:
            self.requests += 1
            self.rules = [r for r in self.rules if r.get("count", 1) > 0 and r.get("until", now + 1) > now]
            for r in self.rules:
                if r.get("method") and r["method"] != method:
                    continue
                if r.get("path") and not re.search(r["path"], path):
                    continue
                if "count" in r:
                    r["count"] -= 1
                entry = [method, path, r["action"]]
                self.log.append(entry)
                return r, entry
            entry = [method, path, "forward"]
            self.log.append(entry)
            return None, entry

    def hold(self) -> None:
        with self.lock:
            self.held += 1
            generation = self.generation
            self.lock.notify_all()
            self.lock.wait_for(lambda: self.generation != generation)
            self.held -= 1

    def release(self) -> None:
        with self.lock:
            self.generation += 1
            self.lock.notify_all()


def _read_head(f) -> bytes | None:
    lines = []
    while True:
        line = f.readline(65536)
        if not line:
            return None
        lines.append(line)
        if line in (b"\r\n", b"\n"):
            return b"".join(lines)


def _read_body(f, headers: dict[str, str]) -> bytes:
    """The body as sent (chunked bodies keep their framing)."""
    if "chunked" in headers.get("transfer-encoding", "").lower():
        out = []
        while True:
            size_line = f.readline(65536)
            out.append(size_line)
            size = int(size_line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while True:  # trailers, up to the blank line
                    t = f.readline(65536)
                    out.append(t)
                    if t in (b"\r\n", b"\n", b""):
                        return b"".join(out)
            out.append(f.read(size + 2))
    n = int(headers.get("content-length", "0") or 0)
    return f.read(n) if n else b""


def _parse(head: bytes) -> tuple[str, list[tuple[str, str]]]:
    lines = head.decode("latin-1").split("\r\n")
    return lines[0], [tuple(x.strip() for x in ln.split(":", 1)) for ln in lines[1:] if ":" in ln]  # type: ignore[misc]


def _answer(status: int, body: bytes, content_type: str) -> bytes:
    head = (
        f"HTTP/1.1 {status} Fault\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


def _forward(upstream: tuple[str, int], request_line: str, headers, body: bytes) -> bytes | None:
    """The upstream's whole answer, its head rewritten to close the connection; None if
    the upstream cannot be reached or fails mid-answer."""
    kept = [(k, v) for k, v in headers if k.lower() not in ("connection", "expect", "keep-alive")]
    head = request_line + "\r\n" + "".join(f"{k}: {v}\r\n" for k, v in kept) + "Connection: close\r\n\r\n"
    try:
        with socket.create_connection(upstream, timeout=60) as s:
            s.sendall(head.encode("latin-1") + body)
            chunks = []
            while True:
                c = s.recv(65536)
                if not c:
                    break
                chunks.append(c)
    except OSError:
        return None
    raw = b"".join(chunks)
    sep = raw.find(b"\r\n\r\n")
    if sep < 0:
        return None
    status_line, resp_headers = _parse(raw[: sep + 2])
    resp_kept = [(k, v) for k, v in resp_headers if k.lower() not in ("connection", "keep-alive")]
    new_head = (
        status_line + "\r\n" + "".join(f"{k}: {v}\r\n" for k, v in resp_kept) + "Connection: close\r\n\r\n"
    )
    return new_head.encode("latin-1") + raw[sep + 4 :]


class _Handler(socketserver.StreamRequestHandler):
    state: _State

    def handle(self) -> None:
        head = _read_head(self.rfile)
        if head is None:
            return
        request_line, headers = _parse(head)
        method, target = request_line.split(" ")[:2]
        lower = {k.lower(): v for k, v in headers}
        if lower.get("expect", "").lower() == "100-continue":
            self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            self.wfile.flush()
        body = _read_body(self.rfile, lower)
        path = target.split("?", 1)[0]
        if path.startswith("/__fault__/"):
            self._control(method, path[len("/__fault__/") :], body)
            return
        rule, entry = self.state.match(method, path)
        action = rule["action"] if rule else "forward"
        if action == "status":
            assert rule is not None
            status = int(rule.get("status", 503))
            entry.append(status)
            self.wfile.write(
                _answer(
                    status,
                    rule.get("body", S3_SLOW_DOWN).encode(),
                    rule.get("content_type", "application/xml"),
                )
            )
            return
        if action == "hold":
            self.state.hold()
        answer = _forward(self.state.upstream, request_line, headers, body)
        if action == "drop" or answer is None:
            # no answer at all: the client sees its connection closed
            entry.append(0)
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        entry.append(int(answer.split(b" ", 2)[1]))
        try:
            self.wfile.write(answer)
        except OSError:
            pass  # the client gave up waiting (a timeout test): the upstream applied it anyway

    def _control(self, method: str, command: str, body: bytes) -> None:
        state = self.state
        result: object = {"ok": True}
        if command == "rules" and method == "POST":
            state.add(json.loads(body))
        elif command == "clear":
            with state.lock:
                state.rules.clear()
            state.release()
        elif command == "release":
            state.release()
        elif command == "stats":
            with state.lock:
                result = {"requests": state.requests, "held": state.held, "log": list(state.log)}
        else:
            self.wfile.write(_answer(404, b"{}", "application/json"))
            return
        self.wfile.write(_answer(200, json.dumps(result).encode(), "application/json"))


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


def serve(upstream: str) -> None:
    host, port = upstream.rsplit(":", 1)
    _Handler.state = _State((host, int(port)))
    with _Server(("127.0.0.1", 0), _Handler) as server:
        print(server.server_address[1], flush=True)
        server.serve_forever()


class FaultProxy:
    """The proxy in a child process, and the test's side of its control API."""

    def __init__(self, upstream: str):
        """``upstream``: ``host:port`` or an ``http://host:port`` URL."""
        upstream = upstream.split("://", 1)[-1].split("/", 1)[0]
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), upstream], stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        self.port = int(self.process.stdout.readline())
        self.url = f"http://127.0.0.1:{self.port}"

    def _call(self, command: str, rule: dict | None = None) -> dict:
        data = json.dumps(rule).encode() if rule is not None else None
        method = "GET" if command == "stats" else "POST"
        req = urllib.request.Request(f"{self.url}/__fault__/{command}", data=data or b"", method=method)
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.loads(resp.read())

    def add(self, **rule) -> None:
        """A rule: ``action`` (``status``, ``drop`` or ``hold``), ``method``, ``path`` (a
        regular expression), ``count``, ``seconds``, and for ``status`` ``status``,
        ``body``, ``content_type``."""
        self._call("rules", rule)

    def clear(self) -> None:
        self._call("clear")

    def release(self) -> None:
        self._call("release")

    def stats(self) -> dict:
        return self._call("stats")

    def actions(self, what: str) -> list[list[str]]:
        """The logged requests the proxy handled with ``what`` (``forward``, ``status``, ...)."""
        return [e for e in self.stats()["log"] if e[2] == what]

    def wait_held(self, n: int = 1, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while self.stats()["held"] < n:
            if time.monotonic() > deadline:
                raise TimeoutError(f"no request held in {timeout} s: {self.stats()['log'][-5:]}")
            time.sleep(0.05)

    def close(self) -> None:
        self.process.kill()
        self.process.wait()
        if self.process.stdout:
            self.process.stdout.close()


if __name__ == "__main__":
    serve(sys.argv[1])
