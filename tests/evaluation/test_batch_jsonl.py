"""Reading result streams: lines under a size cap, however the bytes are chunked."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from introspection_cli.evaluation.batch.interface import UnreadableLine
from introspection_cli.evaluation.batch.jsonl import (
    LineBudget,
    OverCap,
    bounded_lines,
    json_lines,
    named_in,
)
from introspection_cli.evaluation.providers.interface import ProviderServiceError


async def _chunks(data: bytes, cuts: list[int]) -> AsyncIterator[bytes]:
    start = 0
    for cut in sorted(set(cuts)):
        if start < cut < len(data):
            yield data[start:cut]
            start = cut
    yield data[start:]


def read(data: bytes, cuts: list[int], max_line: int) -> list[bytes | None]:
    """The lines, None for one over ``max_line``."""
    async def collect() -> list[bytes | None]:
        return [None if isinstance(line, OverCap) else line
                async for line in bounded_lines(_chunks(data, cuts), max_line=max_line)]

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


def test_an_over_long_line_keeps_its_head_whatever_the_chunks() -> None:
    line = b'{"custom_id": "abc", "padding": "' + b"y" * 20000 + b'"}'
    data = b"ok\n" + line + b"\nok\n"
    async def collect(cuts: list[int]) -> list[bytes | OverCap]:
        return [item async for item in bounded_lines(_chunks(data, cuts), max_line=4096)]

    for cuts in ([], [5], list(range(0, len(data), 7)), [3, 4, 600]):
        lines = asyncio.run(collect(cuts))
        assert lines[0] == b"ok" and lines[2] == b"ok"
        over = lines[1]
        assert isinstance(over, OverCap) and line.startswith(over.head)
        assert len(over.head) == 512 and named_in(over.head) == "abc"


def test_a_batch_s_results_are_cut_off_past_twice_its_requests_in_all_its_files() -> None:
    budget = LineBudget(10)

    async def collect(data: bytes, source: str) -> list[object]:
        return [line async for line in json_lines(_chunks(data, []), budget=budget,
                                                  timeout=5, source=source)]

    assert len(asyncio.run(collect(b"{}\n" * 20, "file a"))) == 20
    with pytest.raises(ProviderServiceError, match="file b: the batch's results hold more "
                                                   "than 36 lines for its 10 requests"):
        asyncio.run(collect(b"\n" * 17, "file b"))  # blank lines count too


def test_a_stalled_stream_ends_at_its_deadline() -> None:
    async def stalls() -> AsyncIterator[bytes]:
        yield b'{"a": 1}\n'
        await asyncio.sleep(30)
        yield b"{}\n"

    async def collect() -> list[object]:
        return [line async for line in json_lines(stalls(), budget=LineBudget(0), timeout=0.05,
                                                  source="file f")]

    with pytest.raises(ProviderServiceError, match="not downloaded within"):
        asyncio.run(collect())


def test_lines_that_are_not_json_objects_are_torn_and_name_what_they_still_can() -> None:
    async def collect() -> list[object]:
        stream = _chunks(b'{"a": 1}\n[1]\nnot json\n\xff\xfe\n\n{"b": 2}\n'
                         b'{"custom_id": "k1", "result": {"ty\n { "custom_id" :"k\\"2"\n',
                         [3])
        return [line async for line in json_lines(stream, budget=LineBudget(10), timeout=5,
                                                  source="f")]

    torn = UnreadableLine("torn")
    assert named_in(b'{"id": "r", "n": 1, "x": null, "custom_id": "k3", "response": {') == "k3"
    assert named_in(b'{"id": "r", "response": {"custom_id": "nested"') is None
    assert asyncio.run(collect()) == [{"a": 1}, torn, torn, torn, {"b": 2},
                                      UnreadableLine("torn", "k1"), torn]
