"""Where batch results go: into the run's samples, and into the verdict cache."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from introspection_cli.evaluation.batch.interface import ItemResult, ResultNotCollected
from introspection_cli.evaluation.cache_worker import CacheWorker
from introspection_cli.evaluation.outcomes import Usage
from introspection_cli.evaluation.providers.interface import ModelReply, ProviderError
from introspection_cli.evaluation.stopped import ProviderStopped
from introspection_cli.evaluation.verdict import InvalidReply, ParsedVerdict, parse_reply

Slot = TypeVar("Slot")
#: The settler's handling of one sample's reply or error (``Settler.settle``), with the
#: reply's verdict when it has been parsed already.
Settle = Callable[[Slot, ItemResult, "ParsedVerdict | InvalidReply | None"], None]


@dataclass(frozen=True, slots=True)
class HeldReply:
    """A reply as it is kept until its batch is reconciled: what it parsed to, and its
    tokens (``reply`` has no content left), never its text."""

    parsed: ParsedVerdict | InvalidReply
    reply: ModelReply


class SlotSink(Generic[Slot]):
    """Hands each result to ``settle`` for every sample with its key (the settler's own
    handling of a direct reply: usage, verdict, cache, progress).

    Equal requests (the same cache key) were sent once; a reply's tokens count once.
    A result for a request this run did not ask for (a resumed batch holds more) is
    only cached, if it is a verdict: it was paid for.
    """

    def __init__(self, slots_by_key: Mapping[str, Sequence[Slot]], settle: Settle[Slot], *,
                 cache: CacheWorker | None, usage: Usage) -> None:
        self.slots_by_key = slots_by_key
        self._settle = settle
        self._cache = cache
        self._usage = usage
        self._answered: set[str] = set()

    def hold(self, result: ItemResult) -> HeldReply | ProviderError:
        """``result`` as kept until its batch is reconciled: a reply parsed, its text let go."""
        if isinstance(result, ProviderError):
            return result
        return HeldReply(parse_reply(result), dataclasses.replace(
            result, tool_arguments=None, text=None, refusal=None, other_tool=None))

    def accept(self, key: str, result: HeldReply | ProviderError) -> None:
        """The one outcome of request ``key``: settled for each of its samples."""
        slots = self.slots_by_key.get(key)
        if slots is None:
            if self._cache is not None and isinstance(result, HeldReply) and isinstance(
                    result.parsed, ParsedVerdict):
                self._cache.put(key, result.parsed)
            return
        if key in self._answered:
            return
        self._answered.add(key)
        # Counted in the run that collects it (not collected), or never (not submitted).
        if not isinstance(result, ResultNotCollected | ProviderStopped):
            self._usage.requests += 1
            self._usage.batch_requests += 1
        for index, slot in enumerate(slots):
            if isinstance(result, HeldReply):
                reply = result.reply
                if index:  # the tokens were spent once
                    reply = dataclasses.replace(reply, input_tokens=0, output_tokens=0,
                                                cached_input_tokens=0, cache_write_tokens=0)
                self._settle(slot, reply, result.parsed)
            else:
                self._settle(slot, result, None)

    async def persist(self) -> bool:
        """Write the cache's queued verdicts; False when some could not be written."""
        if self._cache is None:
            return True
        return await self._cache.flush()
