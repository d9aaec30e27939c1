"""Reading a batch's results, a JSONL stream, with every read bounded.

Result files can be large (a line per request, each a whole model reply), so
they are streamed, never read whole; a line longer than the cap is skipped to
its end rather than buffered (its first bytes kept, for the request it names);
the results of one batch may hold at most twice as many lines as it has
requests (:class:`LineBudget`), and every download runs under a deadline.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from introspection_cli.evaluation.batch.interface import UnreadableLine
from introspection_cli.evaluation.providers.interface import ProviderServiceError

#: A model reply is capped at 4 MiB; a result line holds one plus its envelope.
MAX_LINE_BYTES = 4 * 1024 * 1024 + 64 * 1024
#: Lines allowed beyond twice the batch's request count (blank lines, a trailing summary).
_EXTRA_LINES = 16
#: The download deadline: the client timeout, plus this many seconds per 1,000 requests.
_SECONDS_PER_1000_LINES = 60.0
#: The bytes kept of a line over the cap: enough for the custom_id both providers put first.
_HEAD_BYTES = 512
#: A line's top-level custom_id, read from a line that is not whole JSON: the first
#: member, or after a few members with plain values (OpenAI puts ``id`` first).
_NAMED = re.compile(rb'\A\s*\{(?:\s*"[^"\\]{0,40}"\s*:\s*(?:"[^"\\]{0,200}"|null|-?[0-9]{1,20})'
                    rb'\s*,){0,4}\s*"custom_id"\s*:\s*"([^"\\\x00-\x1f]{1,200})"')


class AnswerTooLarge(ProviderServiceError):
    """An answer (a batch or file object) over its size cap: asking again will not help."""


@dataclass(frozen=True, slots=True)
class OverCap:
    """A line longer than the cap, dropped as it arrived; ``head`` is its first bytes."""

    head: bytes


class LineBudget:
    """How many lines the results of one batch may hold, in all its files together.

    Twice its requests (each could come twice and still be reconciled) and a margin;
    the count is this tool's record of the batch, never the provider's own.
    """

    def __init__(self, requests: int) -> None:
        self.requests = requests
        self.limit = 2 * requests + _EXTRA_LINES
        self._used = 0

    def take(self, source: str) -> None:
        """Count one more line read from ``source``; past the limit, stop the download."""
        self._used += 1
        if self._used > self.limit:
            raise ProviderServiceError(
                f"{source}: the batch's results hold more than {self.limit} lines for its "
                f"{self.requests} requests; the rest was not read")


async def bounded_lines(chunks: AsyncIterator[bytes], *, max_line: int = MAX_LINE_BYTES
                        ) -> AsyncIterator[bytes | OverCap]:
    """Each line of the stream ``chunks``, without its line end; an :class:`OverCap` for
    a line longer than ``max_line`` bytes (dropped as it arrives, never held whole)."""
    buffer = bytearray()
    head: bytes | None = None  # while skipping an over-cap line: its first bytes
    async for chunk in chunks:
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                break
            if head is not None:
                yield OverCap(head)
                head = None
            elif len(buffer) + end - start > max_line:
                yield OverCap((bytes(buffer[:_HEAD_BYTES]) + chunk[start:start + _HEAD_BYTES]
                               )[:_HEAD_BYTES])
                buffer.clear()
            elif buffer:
                buffer += chunk[start:end]
                yield bytes(buffer)
                buffer.clear()
            else:
                yield chunk[start:end]
            start = end + 1
        if head is None:
            buffer += chunk[start:]
            if len(buffer) > max_line:
                head = bytes(buffer[:_HEAD_BYTES])
                buffer.clear()
    if head is not None:
        yield OverCap(head)
    elif buffer.strip():
        yield bytes(buffer)


async def json_lines(chunks: AsyncIterator[bytes], *, budget: LineBudget, timeout: float,
                     source: str) -> AsyncIterator[dict[str, Any] | UnreadableLine]:
    """The JSON objects of one of a batch's result streams, and an
    :class:`UnreadableLine` for each line that is not one (blank lines are skipped).

    Every line counts against ``budget``; past it, or past the download's deadline,
    a :class:`ProviderServiceError` naming ``source`` is raised.
    """
    deadline = timeout + _SECONDS_PER_1000_LINES * budget.requests / 1000
    async for line in bounded_lines(_until(chunks, deadline, source)):
        budget.take(source)
        if isinstance(line, OverCap):
            yield UnreadableLine("too large", named_in(line.head))
        elif line.strip():
            value = _object(line)
            yield value if value is not None else UnreadableLine("torn", named_in(line))


def named_in(line: bytes) -> str | None:
    """The custom_id a line that is not whole JSON still names at its start, if any."""
    found = _NAMED.match(line)
    if found is None:
        return None
    try:
        return found.group(1).decode("utf-8")
    except UnicodeDecodeError:
        return None


async def _until(chunks: AsyncIterator[bytes], seconds: float, source: str
                 ) -> AsyncIterator[bytes]:
    """``chunks``, each awaited within what is left of ``seconds`` from now.

    The timeout wraps each read and never spans a ``yield``: a timeout around a
    yield would fire in the consumer's code, as a bare cancellation.
    """
    loop = asyncio.get_running_loop()
    ends_at = loop.time() + seconds
    iterator = aiter(chunks)
    while True:
        try:
            async with asyncio.timeout_at(ends_at):
                chunk = await anext(iterator)
        except StopAsyncIteration:
            return
        except TimeoutError:
            raise ProviderServiceError(
                f"{source} was not downloaded within {seconds:g} s") from None
        yield chunk


async def read_capped(chunks: AsyncIterator[bytes], cap: int, source: str) -> bytes:
    """The whole stream ``chunks``, refused as soon as it passes ``cap`` bytes."""
    body = bytearray()
    async for chunk in chunks:
        body += chunk
        if len(body) > cap:
            size = f"{cap // 2**20} MiB" if cap % 2**20 == 0 else f"{cap} bytes"
            raise AnswerTooLarge(f"{source}: the answer is larger than {size}; it was not "
                                 "read")
    return bytes(body)


def _object(line: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except ValueError:  # also invalid UTF-8
        return None
    return value if isinstance(value, dict) else None
