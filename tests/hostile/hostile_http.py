"""A hostile HTTP server on 127.0.0.1: raw sockets (:class:`tests.support.http_stub.SocketServer`),
so it can do what no well-behaved one does.

Each accepted connection reads one request (headers and a Content-Length body),
then hands the socket to the test's ``respond`` function, which writes whatever
it likes: a body larger than it says, an endless chunked body, a gzip bomb, a
body trickled a byte at a time. A write failing because the client hung up ends
that connection quietly. Every request's header block is recorded.
"""

from __future__ import annotations

import socket
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache

from tests.support.http_stub import SocketServer, read_head

Responder = Callable[[socket.socket], None]


class HostileServer(SocketServer):
    """``with HostileServer(respond) as server: ... server.url ...``"""

    def __init__(self, respond: Responder) -> None:
        super().__init__()
        self.respond = respond
        self.requests: list[bytes] = []

    def handle(self, conn: socket.socket) -> None:
        found = read_head(conn)
        if found is None:
            return
        head, body = found
        _drain_body(conn, head, body)
        self.requests.append(head)
        self.respond(conn)


def _drain_body(conn: socket.socket, head: bytes, body: bytes) -> None:
    """Read the rest of the request's Content-Length body (so the client is not reset)."""
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk


def headers(status: str = "200 OK", **fields: str) -> bytes:
    """A status line and header block; ``Content_Type="x"`` becomes ``Content-Type: x``."""
    lines = [f"HTTP/1.1 {status}"] + [f"{name.replace('_', '-')}: {value}"
                                      for name, value in fields.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii")


def huge_body(total: int, stop: Callable[[], bool]) -> Responder:
    """A 200 announcing ``total`` bytes (say 1 GiB) of one JSON string, then sending them."""
    def respond(conn: socket.socket) -> None:
        conn.sendall(headers(Content_Type="application/json", Content_Length=str(total)))
        block = b"x" * (1 << 20)
        conn.sendall(b'{"fixtures": ["')
        sent = 15
        while sent < total and not stop():
            piece = block[: total - sent]
            conn.sendall(piece)
            sent += len(piece)
    return respond


def endless_chunked(stop: Callable[[], bool]) -> Responder:
    """A 200 with a chunked body that never ends (until the client hangs up)."""
    def respond(conn: socket.socket) -> None:
        conn.sendall(headers(Content_Type="application/json", Transfer_Encoding="chunked"))
        chunk = b"x" * 65536
        framed = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
        conn.sendall(b'f\r\n{"fixtures": ["\r\n')
        while not stop():
            conn.sendall(framed)
    return respond


@cache
def gzip_bomb(decoded_mib: int = 256) -> bytes:
    """gzip of ``decoded_mib`` MiB of zeros: about 1 KiB per MiB on the wire."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(1 << 20)
    parts = [compressor.compress(zeros) for _ in range(decoded_mib)]
    return b"".join(parts) + compressor.flush()


def gzip_bomb_body(decoded_mib: int = 256) -> Responder:
    """A 200 whose small gzip body decodes to ``decoded_mib`` MiB."""
    bomb = gzip_bomb(decoded_mib)

    def respond(conn: socket.socket) -> None:
        conn.sendall(headers(Content_Type="application/json", Content_Encoding="gzip",
                             Content_Length=str(len(bomb))) + bomb)
    return respond


def trickle(payload: bytes, interval: float, stop: Callable[[], bool],
            *, head_too: bool = False) -> Responder:
    """A valid answer sent one byte every ``interval`` seconds (the header block too, if
    ``head_too``), each byte well within any per-read timeout."""
    def respond(conn: socket.socket) -> None:
        head = headers(Content_Type="application/json", Content_Length=str(len(payload)))
        if not head_too:
            conn.sendall(head)
        for byte in _bytes_of((head if head_too else b"") + payload):
            if stop():
                return
            conn.sendall(byte)
            time.sleep(interval)
    return respond


def _bytes_of(data: bytes) -> Iterator[bytes]:
    for index in range(len(data)):
        yield data[index:index + 1]


@contextmanager
def serving(make: Callable[[Callable[[], bool]], Responder]) -> Iterator[HostileServer]:
    """A server whose responder gets the server's own ``stopped`` test."""
    holder: list[HostileServer] = []
    server = HostileServer(lambda conn: make(holder[0].stopped)(conn))
    holder.append(server)
    with server:
        yield server
