"""``--batch`` as a :class:`~introspection_cli.evaluation.dispatch.Dispatcher`: every uncached
sample of the run through its provider's batch API.

Unlike direct calls, a batch needs every request before it is submitted, so all
rows are read (and rendered) first. Equal requests (the same cache key) become one
batch item, whose result settles each of their samples (:class:`.sink.SlotSink`).
A request another live run on the cache is asking for is not submitted: it waits
for that run's verdict, or its batch (:class:`BatchWaiting`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from introspection_cli.errors import ConfigError
from introspection_cli.evaluation.batch.dispatch import send_in_batches
from introspection_cli.evaluation.batch.interface import BatchItem, NoBatchApi
from introspection_cli.evaluation.batch.options import BatchEvents, BatchOptions, BatchRunResult
from introspection_cli.evaluation.batch.sink import Settle, SlotSink
from introspection_cli.evaluation.cache_worker import CacheWorker
from introspection_cli.evaluation.dispatch import Dispatcher
from introspection_cli.evaluation.outcomes import Usage
from introspection_cli.evaluation.providers import ProviderAuthError, ProviderSettings
from introspection_cli.evaluation.sharing import Waiting
from introspection_cli.evaluation.slots import Slot

if TYPE_CHECKING:
    from introspection_cli.evaluation.prepare import ProviderRows


class BatchDispatcher(Dispatcher):
    """Sends a run's uncached samples in batches, waiting as ``options`` says.

    ``result`` is what the batches left running and what to warn about, once run.
    """

    def __init__(self, options: BatchOptions, settle: Settle[Slot], *, store_dir: Path,
                 cache: CacheWorker | None, usage: Usage,
                 new_waiting: Callable[[], Waiting | None],
                 events: BatchEvents | None = None) -> None:
        self._options = options
        self._settle = settle
        self._store_dir = store_dir
        self._cache = cache
        self._usage = usage  # the sink counts each request once, as its result comes
        self._new_waiting = new_waiting
        self._events = events
        self.result: BatchRunResult | None = None

    @property
    def requests(self) -> int:
        return 0  # counted in the run's usage as each result is collected

    async def run(self, rows: ProviderRows, settings: Mapping[str, ProviderSettings]) -> None:
        slots_by_key: dict[str, list[Slot]] = {}
        for name in rows.first:
            async for samples in rows.of(name):
                for slot in samples:
                    if slot.result is None:
                        slots_by_key.setdefault(slot.key, []).append(slot)
        waiting = self._new_waiting()
        items: dict[str, list[BatchItem]] = {}
        for key, slots in slots_by_key.items():
            if waiting is not None and any(slot.held_by is not None for slot in slots):
                for slot in slots:  # another run is asking for it: wait for its result
                    waiting.add(slot)
                continue
            assert slots[0].request is not None
            items.setdefault(slots[0].plan.provider, []).append(BatchItem(key,
                                                                          slots[0].request))
        sink = SlotSink(slots_by_key, self._settle, cache=self._cache, usage=self._usage)
        try:
            self.result = await send_in_batches(
                items, settings, store_dir=self._store_dir, options=self._options, sink=sink,
                events=self._events,
                waited=BatchWaiting(waiting) if waiting is not None else None)
        except ProviderAuthError as exc:
            raise ConfigError(f"{exc}; the run was stopped before collecting the remaining "
                              "rows") from exc
        except NoBatchApi as exc:
            raise ConfigError(str(exc)) from exc


class BatchWaiting:
    """A :class:`~introspection_cli.evaluation.sharing.Waiting` as the batch layer sees it
    (``batch.dispatch.Waited``): keys, and the requests let go, as batch items."""

    def __init__(self, waiting: Waiting) -> None:
        self._waiting = waiting

    def keys(self) -> Collection[str]:
        return self._waiting.keys()

    def forget(self, keys: Collection[str]) -> None:
        self._waiting.forget(keys)

    async def pause(self) -> None:
        await self._waiting.pause()

    async def check(self) -> dict[str, list[BatchItem]]:
        items: dict[str, list[BatchItem]] = {}
        seen: set[str] = set()
        for slot in await self._waiting.check():
            if slot.key not in seen and slot.request is not None:
                seen.add(slot.key)
                items.setdefault(slot.plan.provider, []).append(BatchItem(slot.key,
                                                                          slot.request))
        return items
