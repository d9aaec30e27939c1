"""Where batch results go: into the run's samples, and into the verdict cache."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Generic, TypeVar

from introspection_cli.evaluation.batch.interface import ItemResult, ResultNotCollected
from introspection_cli.evaluation.cache_worker import CacheWorker
from introspection_cli.evaluation.outcomes import Usage
from introspection_cli.evaluation.providers.interface import ModelReply
from introspection_cli.evaluation.verdict import ParsedVerdict, parse_reply

Slot = TypeVar("Slot")


class SlotSink(Generic[Slot]):
    """Hands each result to ``settle`` for every sample with its key (the runner's own
    handling of a direct reply: usage, verdict, cache, progress).

    Equal requests (the same cache key) were sent once; a reply's tokens count once.
    A result for a request this run did not ask for (a resumed batch holds more) is
    only cached, if it is a verdict: it was paid for.
    """

    def __init__(self, slots_by_key: Mapping[str, Sequence[Slot]],
                 settle: Callable[[Slot, ItemResult], None], *, cache: CacheWorker | None,
                 usage: Usage) -> None:
        self.slots_by_key = slots_by_key
        self._settle = settle
        self._cache = cache
        self._usage = usage
        self._answered: set[str] = set()

    def accept(self, key: str, result: ItemResult) -> None:
        slots = self.slots_by_key.get(key)
        if slots is None:
            if self._cache is not None and isinstance(result, ModelReply):
                parsed = parse_reply(result)
                if isinstance(parsed, ParsedVerdict):
                    self._cache.put(key, parsed)
            return
        if key in self._answered:
            return
        self._answered.add(key)
        if not isinstance(result, ResultNotCollected):  # counted in the run that collects it
            self._usage.requests += 1
            self._usage.batch_requests += 1
        for index, slot in enumerate(slots):
            if index and isinstance(result, ModelReply):
                result = dataclasses.replace(result, input_tokens=0, output_tokens=0,
                                             cached_input_tokens=0, cache_write_tokens=0)
            self._settle(slot, result)

    async def persist(self) -> bool:
        """Write the cache's queued verdicts; False when some could not be written."""
        if self._cache is None:
            return True
        return await self._cache.flush()
