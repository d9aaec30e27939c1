"""The units of work of a run: one sample of one row, rendered, keyed, looked up.

A provider's rows become :class:`Slot` values a chunk at a time, only as the
run gets to them: each chunk's memos (:mod:`~introspection_cli.evaluation.memo`)
are looked up first, and a row whose verdicts they find is not rendered; the
other prompts are rendered, their cache keys computed
(:class:`~introspection_cli.evaluation.cache_keys.KeyMaker`, once per judge) and
looked up in one query. So the first calls go out while later rows are still
being read, and memory holds the requests of one chunk, not of the run. A slot
whose prompt is over :data:`PROMPT_LIMIT` is an error before it costs anything.
The keys a chunk's lookup misses are claimed for this run in the same trip to the
cache's thread (:mod:`.claims`); a slot another live run holds is marked
``held_by``, to be waited for rather than sent.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncGenerator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from introspection_cli.evaluation.cache_keys import KeyMaker
from introspection_cli.evaluation.memo import MemoMaker
from introspection_cli.evaluation.plan import JudgePlan, PlannedRow
from introspection_cli.evaluation.providers import ModelRequest
from introspection_cli.evaluation.verdict import ParsedVerdict
from introspection_cli.evaluation.voting import SampleResult

if TYPE_CHECKING:  # a fully cached re-run reads its rows without an event loop
    import asyncio

    from introspection_cli.evaluation.cache import VerdictCache
    from introspection_cli.evaluation.cache_worker import CacheWorker
    from introspection_cli.evaluation.claims import Claimant

#: The largest prompt (system prompt and user message, UTF-8) a row may send.
PROMPT_LIMIT = 2 * 1024 * 1024
#: Rows rendered and looked up together: the first chunk, then every other one.
FIRST_CHUNK_ROWS = 16
CHUNK_ROWS = 256
#: Rows whose memos are looked up together after the first chunk (one trip to the
#: cache's thread for a thousand rows found by memo: under load each trip can wait for
#: the scheduler for milliseconds).
WINDOW_ROWS = 1024


@dataclass(slots=True, eq=False)
class Slot:
    """One sample of one row: its request (until answered), its cache key, its result."""

    plan: JudgePlan
    row: PlannedRow
    sample: int
    key: str
    request: ModelRequest | None
    result: SampleResult | None = None
    #: The sample's prompt memo (:mod:`.memo`), recorded with its verdict.
    memo: str | None = None
    #: Another live run asking for the same request (:mod:`.claims`): this run waits
    #: for its verdict instead of sending it (:mod:`.sharing`).
    held_by: Claimant | None = None


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


def _windows(plans: Sequence[JudgePlan]) -> Iterator[tuple[JudgePlan, list[PlannedRow]]]:
    """Every row of ``plans`` that calls the model, in windows of one plan's rows: a
    small first one, so the first calls go out soon, then larger ones."""
    size = FIRST_CHUNK_ROWS
    for plan in plans:
        calling = [row for row in plan.rows if row.calls_model]
        start = 0
        while start < len(calling):
            yield plan, calling[start:start + size]
            start += size
            size = WINDOW_ROWS


class _PlanMakers:
    """One plan's memo maker, and its key maker once a row of it is rendered (the key
    maker needs the system prompt, so a run that renders nothing imports no Jinja2)."""

    def __init__(self, plan: JudgePlan, provider: str, endpoint: str) -> None:
        self.plan = plan
        self.memos = MemoMaker(plan, provider=provider, endpoint=endpoint)
        self._provider = provider
        self._endpoint = endpoint

    @functools.cached_property
    def keys(self) -> KeyMaker:
        return KeyMaker(provider=self._provider, endpoint=self._endpoint,
                        template=self.plan.template)


#: A chunk of one plan's rows, their memos and the memo lookup under way.
_Waiting = tuple[_PlanMakers, list[PlannedRow], list[Sequence[str | None]],
                 "asyncio.Future[dict[str, tuple[str, ParsedVerdict]]]"]


async def row_slots(plans: Sequence[JudgePlan], *, provider: str, endpoint: str, samples: int,
                    cache: CacheWorker | None) -> AsyncGenerator[RowSlots, None]:
    """Every row of ``plans`` that calls the model, as its samples, a chunk at a time.

    A row whose every sample's memo (:mod:`.memo`) finds a cached verdict is not
    rendered at all. The others are rendered and keyed: a sample found in the cache
    has its result already (``cached``), one whose prompt is too large has its
    error, the others have a request to send. Each window's memos are looked up on
    the cache's thread while the window before it is rendered, a chunk at a time.
    """
    makers: dict[JudgePlan, _PlanMakers] = {}  # plans hash by identity
    waiting: _Waiting | None = None
    for plan, rows in _windows(plans):
        maker = makers.get(plan)
        if maker is None:
            maker = makers[plan] = _PlanMakers(plan, provider, endpoint)
        memos = [maker.memos.memos(row.snapshot_hash, samples) for row in rows]
        wanted = [memo for row_memos in memos for memo in row_memos if memo is not None]
        lookup = cache.memos_soon(wanted) if cache is not None else _nothing_found()
        if waiting is not None:
            async with contextlib.aclosing(_settled(waiting, cache, samples)) as settled:
                async for row in settled:
                    yield row
        waiting = (maker, rows, memos, lookup)
    if waiting is not None:
        async with contextlib.aclosing(_settled(waiting, cache, samples)) as settled:
            async for row in settled:
                yield row


async def _settled(waiting: _Waiting, cache: CacheWorker | None,
                   samples: int) -> AsyncGenerator[RowSlots, None]:
    """A window's rows as samples, a chunk at a time: found by memo, else rendered,
    keyed and looked up."""
    maker, rows, memos, lookup = waiting
    remembered = await lookup
    for start in range(0, len(rows), CHUNK_ROWS):
        chunk = [_remembered(maker.plan, row, row_memos, remembered)
                 or _rendered(maker, row, row_memos, samples)
                 for row, row_memos in zip(rows[start:start + CHUNK_ROWS],
                                           memos[start:start + CHUNK_ROWS], strict=True)]
        wanted = [slot.key for row in chunk for slot in row if slot.result is None]
        found, held = (await cache.lookup_claiming(wanted) if cache is not None and wanted
                       else ({}, {}))
        for row in chunk:
            for slot in row:
                hit = found.get(slot.key)
                if hit is not None:
                    slot.result, slot.request = SampleResult(hit, cached=True), None
                    if slot.memo is not None and cache is not None:
                        cache.remember(slot.memo, slot.key)  # next time, found by memo
                elif slot.result is None:
                    slot.held_by = held.get(slot.key)
            yield row


def remembered_rows(plans: Sequence[JudgePlan], *, provider: str, endpoint: str,
                    samples: int, cache: VerdictCache) -> list[RowSlots] | None:
    """Every row of ``plans`` that calls the model, as :func:`row_slots` gives it, when
    every sample of every one is found by memo; ``None`` at the first that is not.

    Read on the calling thread, before any event loop: for a run with nothing to
    send, which then needs none.
    """
    found: list[RowSlots] = []
    makers: dict[JudgePlan, MemoMaker] = {}  # plans hash by identity
    for plan, rows in _windows(plans):
        maker = makers.get(plan)
        if maker is None:
            maker = makers[plan] = MemoMaker(plan, provider=provider, endpoint=endpoint)
        memos = [maker.memos(row.snapshot_hash, samples) for row in rows]
        wanted = [memo for row_memos in memos for memo in row_memos if memo is not None]
        remembered = cache.get_memos(wanted) if wanted and cache.readable else {}
        for row, row_memos in zip(rows, memos, strict=True):
            slots = _remembered(plan, row, row_memos, remembered)
            if slots is None:
                return None
            found.append(slots)
    return found


def _remembered(plan: JudgePlan, row: PlannedRow, memos: Sequence[str | None],
                remembered: Mapping[str, tuple[str, ParsedVerdict]]) -> RowSlots | None:
    """The row's samples from the cache by memo, when every one of them is there."""
    slots: RowSlots = []
    for sample, memo in enumerate(memos):
        hit = remembered.get(memo) if memo is not None else None
        if hit is None:
            return None
        key, verdict = hit
        slots.append(Slot(plan, row, sample, key, None, SampleResult(verdict, cached=True),
                          memo))
    return slots


def _rendered(maker: _PlanMakers, row: PlannedRow, memos: Sequence[str | None],
              samples: int) -> RowSlots:
    """The row's samples, its prompt rendered and keyed."""
    request = maker.plan.request_for(row)
    error = prompt_size_error(request)
    return [Slot(maker.plan, row, sample, key, None if error else request,
                 SampleResult(None, error) if error else None, memos[sample])
            for sample, key in enumerate(maker.keys.keys(request, samples))]


def _nothing_found() -> asyncio.Future[dict[str, tuple[str, ParsedVerdict]]]:
    import asyncio

    future: asyncio.Future[dict[str, tuple[str, ParsedVerdict]]] = (
        asyncio.get_running_loop().create_future())
    future.set_result({})
    return future
