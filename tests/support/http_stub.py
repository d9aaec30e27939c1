"""What every stub server of the tests shares: listening, threads, requests, replies, stopping.

A stub is a test double on 127.0.0.1, at a port the kernel picks, served from
daemon threads and stopped at the end of its ``with`` block (or by ``stop()``).
Each stub keeps its own scripted behaviour; this module is the machinery they
had each written again:

- :class:`StubServer` speaks HTTP/1.1 (the stdlib ``ThreadingHTTPServer``).
  Each request is read into a :class:`Request` and handed to the stub's
  :meth:`~StubServer.respond`; the :class:`Reply` it returns is sent in one
  write, no sooner than its ``delay`` after the request arrived, or, for a
  ``hang``, never. It counts the requests it answers at once
  (:attr:`~StubServer.max_in_flight`). The model, batch and runtime stubs are
  built on it.
- :class:`SocketServer` hands each raw connection to :meth:`~SocketServer.handle`,
  for servers that must misbehave below HTTP (tests/hostile/hostile_http.py) or
  speak TLS or CONNECT (tests/runtime/tls_stubs.py); :func:`read_head` reads a
  request's header block off one.
- :class:`Scripted` holds the replies a test scripts ahead, served first and
  in order; :func:`json_reply` is a JSON answer; :func:`unused_port` is a port
  nobody listens on (a connection refused).

Nothing is logged: no stub writes a request line or a header anywhere.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Generic, Self, TypeVar

HOST = "127.0.0.1"
#: The longest a ``hang`` holds its connection; the server stopping ends it sooner.
HANG_LIMIT = 10.0

_T = TypeVar("_T")


@dataclass(frozen=True)
class Request:
    """One request as a stub received it; header names are lower-cased."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes
    #: The requests being answered when this one arrived, itself included.
    in_flight: int = 1

    def json(self) -> Any:
        """The body as JSON; ``ValueError`` when it is not."""
        return json.loads(self.body)

    def carries_key(self, key: str | None) -> bool:
        """True when no key is asked for (``key`` None) or the request sends it, as a
        bearer token (OpenAI) or an ``x-api-key`` (Anthropic)."""
        if key is None:
            return True
        bearer = self.headers.get("authorization", "").removeprefix("Bearer ")
        return key in (bearer, self.headers.get("x-api-key", ""))


@dataclass(frozen=True)
class Reply:
    """An answer: its status, headers and body (bytes as they are, anything else as
    JSON), sent no sooner than ``delay`` seconds after the request arrived; a ``hang``
    is never answered (its connection is held until the server stops)."""

    status: int = 200
    body: Any = b""
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0
    hang: bool = False

    def payload(self) -> bytes:
        return self.body if isinstance(self.body, bytes) else json.dumps(self.body).encode()


def json_reply(status: int, payload: object, **headers: str) -> Reply:
    """A JSON answer; ``Retry_After="2"`` becomes the ``Retry-After`` header."""
    named = {name.replace("_", "-"): value for name, value in headers.items()}
    return Reply(status, payload, {"Content-Type": "application/json", **named})


class Scripted(Generic[_T]):
    """What a test scripts ahead (replies, faults): taken first, in order, by any thread."""

    def __init__(self, items: Iterable[_T] = ()) -> None:
        self._items: deque[_T] = deque(items)
        self._lock = threading.Lock()

    def extend(self, items: Iterable[_T]) -> None:
        with self._lock:
            self._items.extend(items)

    def take(self) -> _T | None:
        """The next scripted item, or None once the script has run out."""
        with self._lock:
            return self._items.popleft() if self._items else None


class StubServer:
    """An HTTP stub on 127.0.0.1: subclasses say how to answer in :meth:`respond`.

    ``default_headers`` go out with every reply that does not set them itself.
    """

    def __init__(self, *, default_headers: Mapping[str, str] | None = None) -> None:
        self.default_headers = dict(default_headers or {})
        #: Set when the server stops: it ends every ``hang``.
        self.stopping = threading.Event()
        #: The most requests the server was answering at one moment (concurrency seen).
        self.max_in_flight = 0
        self._in_flight = 0
        self._flight_lock = threading.Lock()
        self._httpd = _HTTPServer((HOST, 0), _Handler)
        self._httpd.stub = self
        self._serving = threading.Thread(target=self._httpd.serve_forever,
                                         kwargs={"poll_interval": 0.05}, daemon=True)

    def respond(self, request: Request) -> Reply:
        """The answer to ``request`` (called on the request's own thread)."""
        raise NotImplementedError

    @property
    def port(self) -> int:
        return int(self._httpd.server_port)

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def start(self) -> Self:
        self._serving.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def track(self, change: int) -> int:
        """Count a request starting (+1) or finished (-1); the number in flight now."""
        with self._flight_lock:
            self._in_flight += change
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            return self._in_flight


class _HTTPServer(ThreadingHTTPServer):
    # socketserver's default listen backlog is 5: when a client opens more connections at
    # once (a run with --concurrency 16), the kernel drops the extra handshakes and the
    # client's TCP stack retries them only after ~1 s, stalling those requests.
    request_queue_size = 1024
    daemon_threads = True
    stub: StubServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in one write; without TCP_NODELAY, Nagle's algorithm
    # meets the client's delayed ACK and adds ~40 ms to every reply.
    disable_nagle_algorithm = True
    server: _HTTPServer

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _serve(self) -> None:
        # The delay runs from the request's arrival, so reading it and choosing the
        # reply happen inside it, as on a real server: an answer comes `delay` seconds
        # after the request (never sooner), not delay + the stub's own work.
        arrived = time.perf_counter()
        stub = self.server.stub
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {name.lower(): value for name, value in self.headers.items()}
        in_flight = stub.track(+1)
        try:
            reply = stub.respond(Request(self.command, self.path, headers, body, in_flight))
            if reply.hang:
                stub.stopping.wait(HANG_LIMIT)
                self.close_connection = True
                return
            time.sleep(max(0.0, arrived + reply.delay - time.perf_counter()))
            self._send(reply)
        finally:
            stub.track(-1)

    def _send(self, reply: Reply) -> None:
        payload = reply.payload()
        fields = {name.lower(): (name, value) for name, value in
                  [*self.server.stub.default_headers.items(), *reply.headers.items()]}
        fields["content-length"] = ("content-length", str(len(payload)))
        reason = self.responses.get(reply.status, ("",))[0]
        head = "".join([f"HTTP/1.1 {reply.status} {reason}\r\n",
                        *(f"{name}: {value}\r\n" for name, value in fields.values()), "\r\n"])
        # A client that gave up (a hang past its timeout) gets no answer.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            # One write for head and body, as most servers do: written separately,
            # the client needs two reads (two event-loop turns) for every reply.
            self.wfile.write(head.encode("latin-1") + payload)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean; never log request lines or headers


class SocketServer:
    """A raw TCP server on 127.0.0.1: each connection is handed to :meth:`handle` on
    its own daemon thread, its reads bounded by :attr:`timeout`; an error on it (the
    client hanging up) ends that connection quietly."""

    #: Seconds any one read or write on a connection may wait.
    timeout = 30.0

    def __init__(self) -> None:
        self.connections = 0
        self._listener = socket.create_server((HOST, 0))
        self._stop = threading.Event()
        self._serving = threading.Thread(target=self._serve, daemon=True)

    def handle(self, conn: socket.socket) -> None:
        """Serve one connection (closed when this returns)."""
        raise NotImplementedError

    @property
    def port(self) -> int:
        return int(self._listener.getsockname()[1])

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def stopped(self) -> bool:
        return self._stop.is_set()

    def __enter__(self) -> Self:
        self._serving.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
        self._listener.close()
        self._serving.join(5)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._guarded, args=(conn,), daemon=True).start()

    def _guarded(self, conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):  # ssl.SSLError is an OSError too
            conn.settimeout(self.timeout)
            self.handle(conn)


def read_head(conn: socket.socket) -> tuple[bytes, bytes] | None:
    """A request's header block read off ``conn`` (without its blank line) and the bytes
    read past it; None when the peer stops sending first."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def unused_port() -> int:
    """A port on 127.0.0.1 that nothing listens on: connecting to it is refused."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])
