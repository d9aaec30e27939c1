"""Reading a batch's results, a JSONL stream, with every read bounded.

Result files can be large (a line per request, each a whole model reply), so
they are streamed, never read whole; a line longer than the cap is skipped to
its end (its request then has no result, an error row) rather than buffered;
a stream with more lines than the batch has requests is cut off; the whole
download runs under a deadline.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from introspection_cli.evaluation.providers.interface import ProviderServiceError

#: A model reply is capped at 4 MiB; a result line holds one plus its envelope.
MAX_LINE_BYTES = 4 * 1024 * 1024 + 64 * 1024
#: Lines allowed beyond the batch's request count (blank lines, a trailing summary).
_EXTRA_LINES = 16
#: The download deadline: the client timeout, plus this many seconds per 1,000 requests.
_SECONDS_PER_1000_LINES = 60.0


async def bounded_lines(chunks: AsyncIterator[bytes], *, max_line: int = MAX_LINE_BYTES
                        ) -> AsyncIterator[bytes | None]:
    """Each line of the stream ``chunks``, without its line end; ``None`` for a line
    longer than ``max_line`` bytes (dropped as it arrives, never held whole)."""
    buffer = bytearray()
    skipping = False
    async for chunk in chunks:
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                break
            if skipping:
                skipping = False
                yield None
            elif len(buffer) + end - start > max_line:
                buffer.clear()
                yield None
            elif buffer:
                buffer += chunk[start:end]
                yield bytes(buffer)
                buffer.clear()
            else:
                yield chunk[start:end]
            start = end + 1
        if not skipping:
            buffer += chunk[start:]
            if len(buffer) > max_line:
                buffer.clear()
                skipping = True
    if skipping:
        yield None
    elif buffer.strip():
        yield bytes(buffer)


async def json_lines(chunks: AsyncIterator[bytes], *, expected: int, timeout: float,
                     source: str) -> AsyncIterator[dict[str, Any] | None]:
    """The JSON objects of a result stream expected to hold about ``expected`` lines.

    ``None`` stands for a line that is too long or not a JSON object. More lines than
    ``expected`` allows, or a download past its deadline, is a
    :class:`ProviderServiceError` naming ``source``.
    """
    limit = expected + _EXTRA_LINES
    deadline = timeout + _SECONDS_PER_1000_LINES * expected / 1000
    count = 0
    async for line in bounded_lines(_until(chunks, deadline, source)):
        if line is not None and not line.strip():
            continue
        count += 1
        if count > limit:
            raise ProviderServiceError(
                f"{source} holds more than {limit} lines for {expected} requests; "
                "the rest was not read")
        yield _object(line)


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
            raise ProviderServiceError(f"{source}: the answer is larger than {size}; it was "
                                       "not read")
    return bytes(body)


def _object(line: bytes | None) -> dict[str, Any] | None:
    if line is None:
        return None
    try:
        value = json.loads(line)
    except ValueError:  # also invalid UTF-8
        return None
    return value if isinstance(value, dict) else None
