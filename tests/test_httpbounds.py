"""httpbounds: the decoded-size cap and the wall-clock deadline, over real HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import gzip
import socket
import zlib
from collections.abc import Callable

import httpx2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from introspection_cli.httpbounds import (
    PIECE,
    AsyncBoundedTransport,
    BodyTooLarge,
    BoundedTransport,
    describe_size,
    wall_clock,
)
from introspection_cli.httpdecode import BoundedDecoder
from tests.hostile.hostile_http import HostileServer, gzip_bomb, headers, serving, trickle


def answering(body: bytes, **fields: str) -> Callable[[socket.socket], None]:
    def respond(conn: socket.socket) -> None:
        conn.sendall(headers(Content_Length=str(len(body)), **fields) + body)
    return respond


def get(server: HostileServer, *, max_body: int = 1000, deadline: float | None = None,
        timeout: float = 5.0) -> httpx2.Response:
    transport = BoundedTransport(max_body=max_body, deadline=deadline, verify=False)
    with httpx2.Client(transport=transport, timeout=timeout) as client:
        return client.get(server.url + "/")


def raw_deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush()


BODY = b'{"hello": "world"}' * 40  # 720 bytes


@pytest.mark.parametrize(("encoded", "encoding"), [
    (BODY, None),
    (gzip.compress(BODY), "gzip"),
    (gzip.compress(BODY), "x-gzip"),
    (zlib.compress(BODY), "deflate"),
    (raw_deflate(BODY), "deflate"),
    (gzip.compress(gzip.compress(BODY)), "gzip, gzip"),
    (BODY, "identity"),
])
def test_bodies_are_handed_on_decoded(encoded: bytes, encoding: str | None) -> None:
    fields = {"Content_Encoding": encoding} if encoding else {}
    with HostileServer(answering(encoded, **fields)) as server:
        response = get(server)

    assert response.content == BODY
    assert "content-encoding" not in response.headers
    assert b"accept-encoding: gzip, deflate" in server.requests[0].lower()


def test_a_body_of_exactly_the_cap_is_read_and_one_byte_more_is_not() -> None:
    with HostileServer(answering(b"x" * 1000)) as server:
        assert len(get(server, max_body=1000).content) == 1000
    with HostileServer(answering(b"x" * 1001)) as server, pytest.raises(BodyTooLarge) as caught:
        get(server, max_body=1000)
    assert caught.value.limit == 1000
    assert "larger than 1000 bytes (decoded)" in str(caught.value)


def test_the_cap_counts_decoded_bytes_not_bytes_on_the_wire() -> None:
    bomb = gzip.compress(bytes(100_000))  # about 100 bytes on the wire
    with HostileServer(answering(bomb, Content_Encoding="gzip")) as server, \
            pytest.raises(BodyTooLarge):
        get(server, max_body=50_000)


def test_a_gzip_bomb_is_decoded_a_piece_at_a_time_up_to_the_cap() -> None:
    decoder = BoundedDecoder("gzip", limit=8 << 20)
    pieces: list[int] = []

    with pytest.raises(BodyTooLarge):
        for piece in decoder.feed(gzip_bomb(64)):
            pieces.append(len(piece))

    assert max(pieces) <= PIECE
    assert sum(pieces) <= 8 << 20


@given(st.binary(max_size=5000), st.sampled_from(["gzip", "deflate", "gzip, deflate"]),
       st.integers(min_value=1, max_value=700))
def test_decoding_in_any_chunking_gives_the_original(data: bytes, encoding: str,
                                                     chunk: int) -> None:
    encoded = data
    for name in [e.strip() for e in encoding.split(",")]:
        encoded = gzip.compress(encoded) if name == "gzip" else zlib.compress(encoded)
    decoder = BoundedDecoder(encoding, limit=len(data))
    out = b"".join(piece for start in range(0, len(encoded), chunk)
                   for piece in decoder.feed(encoded[start:start + chunk]))

    assert out + b"".join(decoder.finish()) == data


@pytest.mark.parametrize(("body", "encoding", "problem"), [
    (b"not gzip at all", "gzip", "cannot be decompressed"),
    (b"whatever", "br", "Content-Encoding 'br'"),
    (b"whatever", "gzip, gzip, gzip, gzip", "too many encodings"),
])
def test_a_body_that_cannot_be_decoded_is_a_decoding_error(body: bytes, encoding: str,
                                                           problem: str) -> None:
    with HostileServer(answering(body, Content_Encoding=encoding)) as server, \
            pytest.raises(httpx2.DecodingError) as caught:
        get(server)
    assert problem in str(caught.value)


def test_the_deadline_covers_a_trickled_body() -> None:
    # One byte every 0.05 s (each read well within the 5 s timeout) for 400 bytes: 20 s.
    with serving(lambda stop: trickle(b"x" * 400, 0.05, stop)) as server, \
            pytest.raises(httpx2.ReadTimeout):
        get(server, deadline=0.5)


def test_the_deadline_covers_trickled_headers() -> None:
    with serving(lambda stop: trickle(b"x" * 10, 0.05, stop, head_too=True)) as server, \
            pytest.raises(httpx2.ReadTimeout):
        get(server, deadline=0.5)


def test_wall_clock_bounds_a_block_of_calls() -> None:
    with serving(lambda stop: trickle(b"x" * 400, 0.05, stop)) as server, \
            pytest.raises(httpx2.ReadTimeout), wall_clock(0.5):
        get(server, deadline=None)


def test_an_answer_within_the_deadline_is_read() -> None:
    with serving(lambda stop: trickle(b"xyz", 0.01, stop)) as server:
        assert get(server, deadline=5.0).content == b"xyz"


def test_the_async_transport_caps_and_times_out_the_same_way() -> None:
    async def fetch(server: HostileServer, deadline: float | None) -> bytes:
        transport = AsyncBoundedTransport(max_body=1000, deadline=deadline, verify=False)
        async with httpx2.AsyncClient(transport=transport, timeout=5.0) as client:
            return (await client.get(server.url + "/")).content

    with HostileServer(answering(gzip.compress(BODY), Content_Encoding="gzip")) as server:
        assert asyncio.run(fetch(server, None)) == BODY
    with HostileServer(answering(gzip.compress(bytes(5000)), Content_Encoding="gzip")) as server, \
            pytest.raises(BodyTooLarge):
        asyncio.run(fetch(server, None))
    with serving(lambda stop: trickle(b"x" * 400, 0.05, stop)) as server, \
            pytest.raises(httpx2.ReadTimeout):
        asyncio.run(fetch(server, 0.5))
    with serving(lambda stop: trickle(b"x" * 10, 0.05, stop, head_too=True)) as server, \
            pytest.raises(httpx2.TimeoutException):
        asyncio.run(fetch(server, 0.5))


@pytest.mark.parametrize(("size", "shown"), [(64 << 20, "64 MiB"), (4 << 20, "4 MiB"),
                                             (512 << 10, "512 KiB"), (1000, "1000 bytes")])
def test_sizes_are_described_in_their_unit(size: int, shown: str) -> None:
    assert describe_size(size) == shown
