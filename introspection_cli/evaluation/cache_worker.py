"""The verdict cache used from the event loop: every read and write on one worker thread."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from introspection_cli.evaluation.cache import WRITE_BATCH, Entry, VerdictCache
from introspection_cli.evaluation.verdict import ParsedVerdict


class CacheWorker:
    """A :class:`VerdictCache` used from the event loop: each read and write runs on one
    worker thread, in order, so the loop never waits for the disk or a lock."""

    def __init__(self, cache: VerdictCache) -> None:
        self.cache = cache
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="verdict-cache")
        self._pending: list[Entry] = []

    def lookup_soon(self, keys: Sequence[str]) -> asyncio.Future[dict[str, ParsedVerdict]]:
        """The cached verdicts among ``keys``: the read starts now, on the worker."""
        loop = asyncio.get_running_loop()
        if not self.cache.readable or not keys:
            future: asyncio.Future[dict[str, ParsedVerdict]] = loop.create_future()
            future.set_result({})
            return future
        return loop.run_in_executor(self._executor, self.cache.get_many, keys)

    async def lookup(self, keys: Sequence[str]) -> dict[str, ParsedVerdict]:
        """The cached verdicts among ``keys``."""
        return await self.lookup_soon(keys)

    def memos_soon(self, memos: Sequence[str]
                   ) -> asyncio.Future[dict[str, tuple[str, ParsedVerdict]]]:
        """The key and cached verdict of each of ``memos`` found: the read starts now."""
        loop = asyncio.get_running_loop()
        if not self.cache.readable or not memos:
            future: asyncio.Future[dict[str, tuple[str, ParsedVerdict]]] = loop.create_future()
            future.set_result({})
            return future
        return loop.run_in_executor(self._executor, self.cache.get_memos, memos)

    def put(self, key: str, verdict: ParsedVerdict, memo: str | None = None) -> None:
        """Queue a verdict; a full batch is handed to the worker, not waited for."""
        self._queue((key, verdict.verdict, verdict.reasoning, memo, verdict.tokens))

    def remember(self, memo: str, key: str) -> None:
        """Queue which key ``memo`` renders to (its verdict is cached already)."""
        self._queue((key, "", "", memo, None))

    def _queue(self, entry: Entry) -> None:
        self._pending.append(entry)
        if len(self._pending) >= WRITE_BATCH:
            self._submit()

    def _submit(self) -> None:
        batch, self._pending = self._pending, []
        self._executor.submit(self.cache.write, batch)

    async def flush(self) -> bool:
        """Write what is queued now; False when some verdicts could not be written (or the
        cache takes none: read-only, or not used)."""
        failures = self.cache.write_failures
        batch, self._pending = self._pending, []
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self.cache.write, batch)
        return self.cache.writable and self.cache.write_failures == failures

    async def aclose(self) -> None:
        """Write what is queued and close the database, on the worker."""
        self._submit()
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(self._executor, self.cache.close)
        finally:
            self._executor.shutdown(wait=True)
