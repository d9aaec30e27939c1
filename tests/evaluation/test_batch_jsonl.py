"""Reading result streams: lines under a size cap, however the bytes are chunked."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from introspection_cli.evaluation.batch.jsonl import bounded_lines, json_lines
from introspection_cli.evaluation.providers.interface import ProviderServiceError


async def _chunks(data: bytes, cuts: list[int]) -> AsyncIterator[bytes]:
    start = 0
    for cut in sorted(set(cuts)):
        if start < cut < len(data):
            yield data[start:cut]
            start = cut
    yield data[start:]


def read(data: bytes, cuts: list[int], max_line: int) -> list[bytes | None]:
    async def collect() -> list[bytes | None]:
        return [line async for line in bounded_lines(_chunks(data, cuts), max_line=max_line)]

    return asyncio.run(collect())



@given(st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=12),
       st.lists(st.integers(min_value=0, max_value=600), max_size=20),
       st.integers(min_value=1, max_value=30), st.booleans())
def test_lines_are_split_as_bytes_split_them_whatever_the_chunks(
        lines: list[bytes], cuts: list[int], max_line: int, final_newline: bool) -> None:
    data = b"\n".join(lines) + (b"\n" if final_newline and lines else b"")
    want = [None if len(line) > max_line else line for line in lines]
    if lines and not final_newline and not lines[-1].strip():
        want = want[:-1]  # a trailing fragment of whitespace is not a line
    assert read(data, cuts, max_line) == want


def test_an_over_long_line_is_never_held_whole() -> None:
    # 64 chunks of 1 KiB without a newline: the buffer is dropped as soon as it is too long.
    data = b"x" * 65536 + b"\nok\n"
    assert read(data, list(range(0, len(data), 1024)), 4096) == [None, b"ok"]


def test_a_stream_longer_than_its_requests_is_cut_off() -> None:
    async def collect() -> list[object]:
        stream = _chunks(b"{}\n" * 100, [])
        return [line async for line in json_lines(stream, expected=10, timeout=5,
                                                  source="file f")]

    with pytest.raises(ProviderServiceError, match="file f holds more than 26 lines"):
        asyncio.run(collect())


def test_a_stalled_stream_ends_at_its_deadline() -> None:
    async def stalls() -> AsyncIterator[bytes]:
        yield b'{"a": 1}\n'
        await asyncio.sleep(30)
        yield b"{}\n"

    async def collect() -> list[object]:
        return [line async for line in json_lines(stalls(), expected=0, timeout=0.05,
                                                  source="file f")]

    with pytest.raises(ProviderServiceError, match="not downloaded within"):
        asyncio.run(collect())


def test_lines_that_are_not_json_objects_are_none() -> None:
    async def collect() -> list[object]:
        stream = _chunks(b'{"a": 1}\n[1]\nnot json\n\xff\xfe\n\n{"b": 2}', [3])
        return [line async for line in json_lines(stream, expected=10, timeout=5,
                                                  source="f")]

    assert asyncio.run(collect()) == [{"a": 1}, None, None, None, {"b": 2}]
