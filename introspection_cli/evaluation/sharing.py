"""Samples another live run is asking the provider for: waited for, then read from the cache.

A sample whose request another run on the same cache has claimed
(:mod:`.claims`, ``Slot.held_by``) is not sent: it waits here. Every so often (a
tenth of a second at first, then half as long again each time nothing changed, up
to two seconds) the waiting samples are looked up again: one whose verdict has
reached the cache is settled from it, as a cache hit; one the other run has let go
without a verdict (it got an error, ended, or died) is claimed by this run and
handed back to be sent. So two runs of the same rows share the work, each reading
the other's verdicts, and neither waits for a run that is gone.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Collection

from introspection_cli.evaluation.cache_worker import CacheWorker
from introspection_cli.evaluation.slots import RowSlots, Slot
from introspection_cli.evaluation.verdict import ParsedVerdict

_FIRST_INTERVAL = 0.1
_LONGEST_INTERVAL = 2.0
_GROWTH = 1.5


class Waiting:
    """The samples of one run that wait for other runs' verdicts."""

    def __init__(self, worker: CacheWorker, settle: Callable[[Slot, ParsedVerdict], None]
                 ) -> None:
        self._worker = worker
        self._settle = settle
        self._slots: dict[str, list[Slot]] = {}
        self._count = 0  # slots in _slots (the progress line asks often)
        self._interval = _FIRST_INTERVAL
        self._next = 0.0

    def __len__(self) -> int:
        return self._count

    def add(self, slot: Slot) -> None:
        """Wait for ``slot``'s verdict (its request is held by ``slot.held_by``)."""
        if not self._slots:
            self._next = asyncio.get_running_loop().time() + self._interval
        self._slots.setdefault(slot.key, []).append(slot)
        self._count += 1

    def keys(self) -> Collection[str]:
        """The keys waited for."""
        return self._slots.keys()

    def forget(self, keys: Collection[str]) -> None:
        """Stop waiting for ``keys``: their results come another way (a batch resumed)."""
        for key in keys:
            self._count -= len(self._slots.pop(key, ()))

    def due(self) -> bool:
        """Whether it is time to look again."""
        return bool(self._slots) and asyncio.get_running_loop().time() >= self._next

    async def pause(self) -> None:
        """Sleep until it is time to look again."""
        await asyncio.sleep(max(0.0, self._next - asyncio.get_running_loop().time()))

    async def check(self) -> list[Slot]:
        """Settle the samples whose verdicts are in the cache now; returns those the
        other run let go of, now claimed by this run, to be sent."""
        self._worker.push()  # this run's verdicts first: the other may wait for them
        found, held = await self._worker.lookup_claiming(list(self._slots))
        freed: list[Slot] = []
        for key in list(self._slots):
            if key in found or key not in held:
                slots = self._slots.pop(key)
                self._count -= len(slots)
                for slot in slots:
                    slot.held_by = None
                    if key in found:
                        self._settle(slot, found[key])
                    else:
                        freed.append(slot)
        self._interval = (_FIRST_INTERVAL if found or freed
                          else min(self._interval * _GROWTH, _LONGEST_INTERVAL))
        self._next = asyncio.get_running_loop().time() + self._interval
        return freed


async def shared_rows(rows: AsyncIterator[RowSlots], waiting: Waiting
                      ) -> AsyncIterator[RowSlots]:
    """``rows`` to send, without the samples another run holds: those wait in
    ``waiting``, and each one the other run lets go comes back here, to be sent."""
    async for row in rows:
        if any(slot.held_by is not None and slot.result is None for slot in row):
            mine = [slot for slot in row if slot.held_by is None or slot.result is not None]
            for slot in row:
                if slot.held_by is not None and slot.result is None:
                    waiting.add(slot)
            row = mine
        if row:
            yield row
        if waiting.due():
            freed = await waiting.check()
            if freed:
                yield freed
    while len(waiting):
        await waiting.pause()
        freed = await waiting.check()
        if freed:
            yield freed
