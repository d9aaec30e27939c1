"""The units of work of a run: one sample of one row, rendered, keyed, looked up.

A provider's rows become :class:`Slot` values a chunk at a time, only as the
run gets to them: each chunk's prompts are rendered, their cache keys computed
(:class:`~introspection_cli.evaluation.cache_keys.KeyMaker`, once per judge) and
looked up in one query, so the first calls go out while later rows are still
being read, and memory holds the requests of one chunk, not of the run. A slot
whose prompt is over :data:`PROMPT_LIMIT` is an error before it costs anything.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Iterator, Mapping, Sequence
from dataclasses import dataclass

from introspection_cli.evaluation.cache import CacheWorker
from introspection_cli.evaluation.cache_keys import KeyMaker
from introspection_cli.evaluation.plan import JudgePlan, PlannedRow
from introspection_cli.evaluation.providers import ModelRequest
from introspection_cli.evaluation.verdict import ParsedVerdict
from introspection_cli.evaluation.voting import SampleResult

#: The largest prompt (system prompt and user message, UTF-8) a row may send.
PROMPT_LIMIT = 2 * 1024 * 1024
#: Rows rendered and looked up together: the first chunk, then every other one.
FIRST_CHUNK_ROWS = 16
CHUNK_ROWS = 256


@dataclass(slots=True, eq=False)
class Slot:
    """One sample of one row: its request (until answered), its cache key, its result."""

    plan: JudgePlan
    row: PlannedRow
    sample: int
    key: str
    request: ModelRequest | None
    result: SampleResult | None = None


#: A row's samples, in sample order.
RowSlots = list[Slot]


def prompt_size_error(request: ModelRequest) -> str | None:
    """Why ``request`` is not sent (``prompt too large: ...``), or ``None``."""
    if (len(request.system) + len(request.user)) * 4 <= PROMPT_LIMIT:
        return None  # cannot be over: no need to encode
    size = len(request.system.encode("utf-8", "surrogatepass")) + len(
        request.user.encode("utf-8", "surrogatepass"))
    if size <= PROMPT_LIMIT:
        return None
    return (f"prompt too large: {size / 2**20:.1f} MiB with the conversation, over the "
            f"{PROMPT_LIMIT // 2**20} MiB limit; it was not sent")


def _chunks(plans: Sequence[JudgePlan], *, provider: str, endpoint: str,
            samples: int) -> Iterator[list[RowSlots]]:
    """Every row of ``plans`` that calls the model, rendered and keyed, in chunks: a
    small first one, so the first calls go out soon, then larger ones."""
    size = FIRST_CHUNK_ROWS
    for plan in plans:
        keys = KeyMaker(provider=provider, endpoint=endpoint, template=plan.template)
        calling = [row for row in plan.rows if row.calls_model]
        start = 0
        while start < len(calling):
            chunk: list[RowSlots] = []
            for row in calling[start:start + size]:
                request = plan.request_for(row)
                error = prompt_size_error(request)
                chunk.append([
                    Slot(plan, row, sample, key, None if error else request,
                         SampleResult(None, error) if error else None)
                    for sample, key in enumerate(keys.keys(request, samples))])
            yield chunk
            start += size
            size = CHUNK_ROWS


async def row_slots(plans: Sequence[JudgePlan], *, provider: str, endpoint: str, samples: int,
                    cache: CacheWorker | None) -> AsyncGenerator[RowSlots, None]:
    """Every row of ``plans`` that calls the model, as its samples, a chunk at a time.

    A sample found in the cache has its result already (``cached``); one whose prompt
    is too large has its error; the others have a request to send. Each chunk's
    lookup runs on the cache's thread while the next chunk is rendered.
    """
    waiting: tuple[list[RowSlots], asyncio.Future[dict[str, ParsedVerdict]]] | None = None
    for chunk in _chunks(plans, provider=provider, endpoint=endpoint, samples=samples):
        wanted = [slot.key for row in chunk for slot in row if slot.result is None]
        lookup = cache.lookup_soon(wanted) if cache is not None else _nothing_found()
        if waiting is not None:
            for row in _answered(waiting[0], await waiting[1]):
                yield row
        waiting = (chunk, lookup)
    if waiting is not None:
        for row in _answered(waiting[0], await waiting[1]):
            yield row


def _answered(chunk: list[RowSlots], found: Mapping[str, ParsedVerdict]) -> list[RowSlots]:
    for row in chunk:
        for slot in row:
            hit = found.get(slot.key)
            if hit is not None:
                slot.result, slot.request = SampleResult(hit, cached=True), None
    return chunk


def _nothing_found() -> asyncio.Future[dict[str, ParsedVerdict]]:
    future: asyncio.Future[dict[str, ParsedVerdict]] = asyncio.get_running_loop().create_future()
    future.set_result({})
    return future
