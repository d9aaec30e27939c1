"""The verdict cache used from the event loop: every read and write on one worker thread."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from introspection_cli.evaluation.cache import WRITE_BATCH, Entry, VerdictCache
from introspection_cli.evaluation.verdict import ParsedVerdict

if TYPE_CHECKING:
    from introspection_cli.evaluation.claims import Claimant, ClaimBoard

#: The cached verdicts found among some keys, and the keys another live run holds.
Lookup = tuple[dict[str, ParsedVerdict], "dict[str, Claimant]"]


class CacheWorker:
    """A :class:`VerdictCache` used from the event loop: each read and write runs on one
    worker thread, in order, so the loop never waits for the disk or a lock.

    With a :class:`~introspection_cli.evaluation.claims.ClaimBoard`, the keys a lookup
    misses are claimed for this run (:meth:`lookup_claiming`); a claim whose sample
    ends without a verdict is let go (:meth:`release`), the others when the run ends
    (a waiting run finds a verdict in the cache first, claimed or not).
    """

    def __init__(self, cache: VerdictCache, claims: ClaimBoard | None = None) -> None:
        self.cache = cache
        self.claims = claims
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="verdict-cache")
        self._pending: list[Entry] = []
        self._released: list[str] = []

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

    async def lookup_claiming(self, keys: Sequence[str]) -> Lookup:
        """The cached verdicts among ``keys``, the others claimed for this run; returns
        the verdicts, and the keys another live run holds (not claimed: wait for them)."""
        if self.claims is None:
            return await self.lookup(keys), {}
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._lookup_claiming, keys)

    def _lookup_claiming(self, keys: Sequence[str]) -> Lookup:
        assert self.claims is not None
        found = self.cache.get_many(keys) if self.cache.readable else {}
        missed = [key for key in keys if key not in found]
        held = self.claims.claim(missed)
        taken = [key for key in missed if key not in held]
        if taken and self.cache.readable:
            # Another run may have written one of them and let go of it between the
            # read and the claim: what is in the cache now is not asked for again.
            late = self.cache.get_many(taken)
            self.claims.release(late)
            found.update(late)
        return found, held

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

    def release(self, key: str) -> None:
        """Let go of this run's claim on ``key`` (its sample ended without a verdict),
        with the next write."""
        if self.claims is not None:
            self._released.append(key)
            if len(self._released) >= WRITE_BATCH:
                self._submit()

    def push(self) -> None:
        """Hand what is queued to the worker now, not waited for: a run waiting for
        another's verdicts first gives its own (else each could wait for the other's
        last, part-filled batch)."""
        if self._pending or self._released:
            self._submit()

    def _queue(self, entry: Entry) -> None:
        self._pending.append(entry)
        if len(self._pending) >= WRITE_BATCH:
            self._submit()

    def _submit(self) -> None:
        batch, self._pending = self._pending, []
        released, self._released = self._released, []
        self._executor.submit(self._write, batch, released)

    def _write(self, batch: Sequence[Entry], released: Sequence[str]) -> None:
        """Write ``batch``, and let go of the claims on ``released``."""
        self.cache.write(batch)
        if self.claims is not None:
            self.claims.release(released)

    async def flush(self) -> bool:
        """Write what is queued now; False when some verdicts could not be written (or the
        cache takes none: read-only, or not used)."""
        failures = self.cache.write_failures
        batch, self._pending = self._pending, []
        released, self._released = self._released, []
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self._write, batch, released)
        return self.cache.writable and self.cache.write_failures == failures

    async def aclose(self) -> None:
        """Write what is queued, let go of every claim and close the database, on the
        worker."""
        self._submit()
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(self._executor, self._close)
        finally:
            self._executor.shutdown(wait=True)

    def _close(self) -> None:
        try:
            self.cache.close()
        finally:
            if self.claims is not None:
                self.claims.close()
