"""The shared stub machinery itself: what every stub server relies on, over real sockets."""

from __future__ import annotations

import http.client
import socket
import threading
import time

import pytest

from tests.support.http_stub import (
    Reply,
    Request,
    Scripted,
    SocketServer,
    StubServer,
    json_reply,
    read_head,
    unused_port,
)


class Echo(StubServer):
    """Answers each request with what it saw; ``replies`` are served first."""

    def __init__(self) -> None:
        super().__init__(default_headers={"content-type": "application/json", "x-stub": "1"})
        self.replies: Scripted[Reply] = Scripted()
        self.seen: list[Request] = []

    def respond(self, request: Request) -> Reply:
        self.seen.append(request)
        return self.replies.take() or json_reply(200, {"path": request.path,
                                                       "key": request.carries_key("k1")})


def call(stub: StubServer, method: str = "GET", path: str = "/", body: bytes | None = None,
         headers: dict[str, str] | None = None,
         timeout: float = 5) -> tuple[http.client.HTTPResponse, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", stub.port, timeout=timeout)
    connection.request(method, path, body=body, headers=headers or {})
    response = connection.getresponse()
    return response, response.read()


def test_a_request_is_read_and_answered_with_the_default_headers_beneath_the_reply() -> None:
    with Echo() as stub:
        stub.replies.extend([Reply(201, b"first", {"X-Stub": "2"})])
        first, first_body = call(stub, "POST", "/v1/x", b'{"a": 1}',
                                 {"Authorization": "Bearer k1"})
        second, second_body = call(stub, headers={"x-api-key": "k2"})

    assert (first.status, first_body, first.headers["x-stub"]) == (201, b"first", "2")
    assert first.headers["content-type"] == "application/json"
    assert (second.status, second_body) == (200, b'{"path": "/", "key": false}')
    posted = stub.seen[0]
    assert (posted.method, posted.path, posted.json()) == ("POST", "/v1/x", {"a": 1})
    assert posted.carries_key("k1") and not posted.carries_key("k2")
    assert stub.seen[1].carries_key("k2") and stub.seen[1].carries_key(None)


def test_a_delayed_reply_comes_no_sooner_than_its_delay_and_in_flight_is_counted() -> None:
    with Echo() as stub:
        stub.replies.extend([Reply(delay=0.3)] * 3)
        start = time.perf_counter()
        threads = [threading.Thread(target=call, args=(stub,)) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - start

    assert 0.3 <= elapsed < 1.5
    assert stub.max_in_flight == 3


def test_a_hang_is_never_answered_and_stopping_releases_it() -> None:
    stub = Echo().start()
    stub.replies.extend([Reply(hang=True)])
    with socket.create_connection(("127.0.0.1", stub.port), timeout=0.5) as conn:
        conn.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        with pytest.raises(TimeoutError):
            conn.recv(100)
        stub.stop()
        conn.settimeout(2)
        assert conn.recv(100) == b""  # closed unanswered, well before the hang's limit


class Head(SocketServer):
    def __init__(self) -> None:
        super().__init__()
        self.heads: list[tuple[bytes, bytes] | None] = []

    def handle(self, conn: socket.socket) -> None:
        self.heads.append(read_head(conn))
        conn.sendall(b"HTTP/1.1 204 No Content\r\n\r\n")


def test_a_socket_server_hands_over_each_connection_and_reads_its_head() -> None:
    with Head() as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as conn:
            conn.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\nextra")
            assert conn.recv(100).startswith(b"HTTP/1.1 204")
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as conn:
            conn.sendall(b"GET / HT")
            conn.shutdown(socket.SHUT_WR)
            assert conn.recv(100).startswith(b"HTTP/1.1 204")
    assert server.connections == 2 and server.stopped()
    assert server.heads == [(b"GET / HTTP/1.1\r\nHost: x", b"extra"), None]


def test_an_unused_port_refuses_connections() -> None:
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", unused_port()), timeout=2)
