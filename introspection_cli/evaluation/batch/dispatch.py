"""Sending samples through the providers' batch APIs: resume, submit, poll, collect.

For each provider, the uncached requests held by a batch an earlier run
submitted (found in the :class:`BatchStore`) are waited for in that batch;
the others are submitted as new batches (one model per batch for OpenAI, each
under the provider's size limits) and recorded at once. Then every batch is
polled, the interval growing by half each time up to five minutes (or the
first interval, if longer), until it ends or the maximum wait passes; an ended
batch's results are read to the end and reconciled with its requests
(:mod:`.reconcile`: exactly one outcome each), handed to the sink and, once the
sink has stored them, the batch is marked collected. Interrupting the wait (Ctrl-C) leaves every
batch running at the provider: the next run resumes it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from introspection_cli.evaluation.batch.interface import (
    BatchBackend,
    BatchGone,
    BatchItem,
    BatchState,
    ItemResult,
    NoBatchApi,
    ResultNotCollected,
)
from introspection_cli.evaluation.batch.jsonl import AnswerTooLarge
from introspection_cli.evaluation.batch.options import BatchEvents, BatchOptions, BatchRunResult
from introspection_cli.evaluation.batch.reconcile import Reconciler
from introspection_cli.evaluation.batch.store import BatchStore, StoredBatch
from introspection_cli.evaluation.providers import sdk_import
from introspection_cli.evaluation.providers.interface import (
    ProviderAuthError,
    ProviderError,
    ProviderRefused,
    ProviderServiceError,
    ProviderSettings,
)
from introspection_cli.evaluation.stopped import NotSubmitted

#: Polling never waits longer than this between two looks (unless asked to start longer).
MAX_POLL_INTERVAL = 300.0
_POLL_GROWTH = 1.5
#: Failed polls in a row (after the SDK's retries) before a batch is left for the next run.
_POLL_FAILURES = 5


Held = TypeVar("Held")


class ResultSink(Protocol[Held]):
    """Where results go: the settler turns them into verdicts and caches them."""

    def hold(self, result: ItemResult) -> Held | ProviderError:
        """What is kept of ``result`` until its batch is reconciled."""

    def accept(self, key: str, result: Held | ProviderError) -> None:
        """One request's one outcome (also for requests of a resumed batch this run lacks)."""

    async def persist(self) -> bool:
        """Store everything accepted so far; False when some of it could not be stored."""


class Waited(Protocol):
    """Requests other live runs on the cache are asking for (:mod:`...sharing`): this
    run waits for their results instead of sending them."""

    def keys(self) -> Collection[str]:
        """The keys still waited for."""

    def forget(self, keys: Collection[str]) -> None:
        """Stop waiting for ``keys``: their results come from a batch this run tracks."""

    async def check(self) -> Mapping[str, Sequence[BatchItem]]:
        """Settle those whose verdicts reached the cache; the items (by provider) their
        runs let go of, now this run's to send."""

    async def pause(self) -> None:
        """Sleep until it is time to check again."""


@dataclass
class _Tracked:
    backend: BatchBackend
    batch_id: str
    keys: frozenset[str]
    state: BatchState | None = None
    poll_failures: int = 0
    #: Why the last poll failed, while it is the last one.
    poll_error: ProviderError | None = None

    @property
    def label(self) -> str:
        return f"{self.backend.provider} {self.batch_id}"


@dataclass
class _Run:
    store: BatchStore
    sink: ResultSink[Any]
    events: BatchEvents | None
    options: BatchOptions
    #: Each request's forced tool, by key (the requests this run sends).
    tool_names: dict[str, str]
    still_running: list[str] = field(default_factory=list)
    #: Batches whose results did not match their requests, a line each.
    warnings: list[str] = field(default_factory=list)


async def send_in_batches(items: Mapping[str, Sequence[BatchItem]],
                          settings: Mapping[str, ProviderSettings], *, store_dir: Path,
                          options: BatchOptions, sink: ResultSink[Any],
                          events: BatchEvents | None = None,
                          waited: Waited | None = None) -> BatchRunResult:
    """Get a result for every item (by provider name) into ``sink`` through that
    provider's batch API; batch ids are kept in ``store_dir``. The requests ``waited``
    holds are other runs': found in their batches, in the cache, or sent once let go.

    A rejected API key raises :class:`ProviderAuthError`, an endpoint without batch
    endpoints :class:`NoBatchApi`; every other failure becomes the result of the
    requests it concerns.
    """
    store = BatchStore(store_dir)
    run = _Run(store, sink, events, options,
               {item.key: item.request.tool_name for group in items.values() for item in group})
    backends: dict[str, BatchBackend] = {}
    sharing = waited is not None and bool(waited.keys())
    try:
        for name in settings:
            if items.get(name) or sharing:
                backends[name] = create_backend(name, settings[name])
        tracked: list[_Tracked] = []
        for name, backend in backends.items():
            tracked += await _resume(run, backend,
                                     {item.key: item for item in items.get(name, ())})
        if waited is not None and sharing:
            tracked += await _share(run, backends, waited, {b.batch_id for b in tracked})
        if tracked and events is not None:
            events.waiting(len(tracked), options)
        await _wait_and_collect(run, tracked)
    finally:
        store.close()
        for backend in backends.values():
            await backend.aclose()
    warnings = dict.fromkeys((*store.warnings, *run.warnings))  # a store read may fail often
    return BatchRunResult(tuple(warnings), tuple(run.still_running))


def create_backend(provider: str, settings: ProviderSettings) -> BatchBackend:
    """The batch backend of ``provider``, importing its SDK now and not before (the way
    the direct path imports it: with the garbage collector out of the way)."""
    if provider == "openai":
        with sdk_import("openai"):
            from introspection_cli.evaluation.batch.openai_batches import OpenAIBatches

            return OpenAIBatches(settings)
    if provider == "anthropic":
        with sdk_import("anthropic"):
            from introspection_cli.evaluation.batch.anthropic_batches import AnthropicBatches

            return AnthropicBatches(settings)
    raise ValueError(f"unknown provider {provider!r}")


async def _resume(run: _Run, backend: BatchBackend, needed: dict[str, BatchItem]
                  ) -> list[_Tracked]:
    """Track the stored batches holding any of ``needed``, then submit the rest anew."""
    tracked: list[_Tracked] = []
    for stored in run.store.open_batches(backend.provider, needed.keys()):
        if stored.keys.isdisjoint(needed):
            continue  # a newer batch holds these requests
        batch = await _look_up(run, backend, stored)
        if batch is None:
            continue
        for key in stored.keys:
            needed.pop(key, None)
        tracked.append(batch)
    for chunk, encoded in _chunks(backend, needed.values()):
        batch = await _submit(run, backend, chunk, encoded)
        if batch is not None:
            tracked.append(batch)
    return tracked


async def _share(run: _Run, backends: Mapping[str, BatchBackend], waited: Waited,
                 tracking: set[str]) -> list[_Tracked]:
    """Wait for the requests other live runs are asking for: each is found in a batch
    one of them submitted (tracked here too), reaches the cache, or is let go by its
    run and then sent in this run's own batch. ``tracking``: the ids tracked already."""
    tracked: list[_Tracked] = []
    while waited.keys():
        for backend in backends.values():
            for stored in run.store.open_batches(backend.provider, waited.keys()):
                if stored.batch_id not in tracking:
                    batch = await _look_up(run, backend, stored)
                    if batch is None:
                        continue
                    tracking.add(batch.batch_id)
                    tracked.append(batch)
                waited.forget(stored.keys)
        if not waited.keys():
            break
        await waited.pause()
        for provider, freed in (await waited.check()).items():
            run.tool_names.update((item.key, item.request.tool_name) for item in freed)
            mine = await _resume(run, backends[provider], {item.key: item for item in freed})
            tracking.update(batch.batch_id for batch in mine)
            tracked += mine
    return tracked


async def _look_up(run: _Run, backend: BatchBackend, stored: StoredBatch) -> _Tracked | None:
    """A stored batch as the provider sees it now; None (and forgotten) when it is gone."""
    batch = _Tracked(backend, stored.batch_id, stored.keys)
    try:
        batch.state = await backend.retrieve(stored.batch_id)
    except BatchGone:
        run.store.collected(backend.provider, stored.batch_id)
        run.store.warnings.append(
            f"batch {stored.batch_id} ({backend.provider}, submitted {stored.created_at}) no "
            "longer exists at the provider; its requests are submitted again")
        return None
    except ProviderAuthError:
        raise
    except ProviderError:
        batch.poll_failures = 1  # polled again with the others
    if run.events is not None:
        run.events.submitted(backend.provider, stored.batch_id, len(stored.keys), resumed=True)
        if batch.state is not None:
            run.events.polled(backend.provider, batch.state)
    return batch


async def _submit(run: _Run, backend: BatchBackend, chunk: Sequence[BatchItem],
                  encoded: Sequence[bytes]) -> _Tracked | None:
    try:
        batch_id = await backend.submit(chunk, encoded)
    except (ProviderAuthError, NoBatchApi):
        raise
    except ProviderError as exc:
        # No batch holds them: not requests the provider ran (nor counted as sent).
        error = NotSubmitted(str(exc), refused=isinstance(exc, ProviderRefused))
        for item in chunk:
            run.sink.accept(item.key, error)
        return None
    keys = frozenset(item.key for item in chunk)
    # Recorded before anything else can go wrong: from here on, a rerun resumes it.
    run.store.record(backend.provider, batch_id, backend.endpoint, keys)
    if run.events is not None:
        run.events.submitted(backend.provider, batch_id, len(keys), resumed=False)
    return _Tracked(backend, batch_id, keys)


def _chunks(backend: BatchBackend, items: Iterable[BatchItem]
            ) -> Iterator[tuple[list[BatchItem], list[bytes]]]:
    """``items`` in batches: one group each, under the backend's request and byte limits."""
    groups: dict[str, list[BatchItem]] = {}
    for item in items:
        groups.setdefault(backend.group_of(item), []).append(item)
    for group in groups.values():
        chunk: list[BatchItem] = []
        encoded: list[bytes] = []
        size = 0
        for item in group:
            line = backend.encode(item)
            if chunk and (len(chunk) == backend.max_requests
                          or size + len(line) > backend.max_bytes):
                yield chunk, encoded
                chunk, encoded, size = [], [], 0
            chunk.append(item)
            encoded.append(line)
            size += len(line)
        if chunk:
            yield chunk, encoded


async def _wait_and_collect(run: _Run, tracked: list[_Tracked]) -> None:
    """Poll until every batch has ended and is collected, or the maximum wait passes."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + run.options.max_wait
    interval = run.options.poll_interval
    longest = max(run.options.poll_interval, MAX_POLL_INTERVAL)
    pending = tracked
    while True:
        for batch in [b for b in pending if b.state is not None and b.state.ended]:
            await _collect(run, batch)
        pending = [b for b in pending if b.state is None or not b.state.ended]
        now = loop.time()
        if not pending or now >= deadline:
            break
        await asyncio.sleep(min(interval, deadline - now))
        interval = min(interval * _POLL_GROWTH, longest)
        pending = [batch for batch in pending if await _poll(run, batch)]
    for batch in pending:
        _leave_running(run, batch, _not_ended(batch, run.options.max_wait))


def _not_ended(batch: _Tracked, max_wait: float) -> str:
    """Why ``batch`` is left when the wait is over: not ended, or not readable."""
    if batch.poll_error is not None:
        return (f"batch {batch.batch_id} could not be polled within the wait of {max_wait:g} s "
                f"(the last {_times(batch.poll_failures)} failed: {batch.poll_error})")
    status = f" (status {batch.state.status})" if batch.state is not None else ""
    return f"batch {batch.batch_id} had not ended{status} within the wait of {max_wait:g} s"


async def _poll(run: _Run, batch: _Tracked) -> bool:
    """Retrieve ``batch``'s state; False when it is no longer waited for."""
    try:
        batch.state = await batch.backend.retrieve(batch.batch_id)
    except BatchGone:
        run.store.collected(batch.backend.provider, batch.batch_id)
        _fail(run, batch.keys, f"batch {batch.batch_id} disappeared at the provider before "
                               "it ended; rerun to submit its requests again")
        return False
    except ProviderAuthError:
        raise
    except AnswerTooLarge as exc:  # it will not get smaller: asking again would not help
        _leave_running(run, batch, f"batch {batch.batch_id} could not be polled ({exc})")
        return False
    except ProviderError as exc:
        batch.poll_failures += 1
        batch.poll_error = exc
        if batch.poll_failures >= _POLL_FAILURES:
            _leave_running(run, batch, f"batch {batch.batch_id} could not be polled "
                                       f"{_POLL_FAILURES} times in a row ({exc})")
            return False
        return True
    batch.poll_failures, batch.poll_error = 0, None
    if run.events is not None:
        run.events.polled(batch.backend.provider, batch.state)
    return True


async def _collect(run: _Run, batch: _Tracked) -> None:
    """Read an ended batch's results to the end, reconcile them with its requests, hand
    each request's one outcome to the sink; mark the batch collected once stored."""
    state = batch.state
    assert state is not None and state.ended
    reconciler = Reconciler(batch.batch_id, batch.keys, run.sink.hold)
    try:
        async for line in batch.backend.results(state, run.tool_names,
                                                requests=len(batch.keys)):
            reconciler.add(line)
    except ProviderAuthError:
        raise
    except ProviderError as exc:
        # Not read to the end, so not reconciled: nothing of it is used. Not marked
        # collected: the next run reads the results again, at no cost.
        _fail(run, batch.keys, f"{exc}; rerun to read the results of batch "
                               f"{batch.batch_id} again (no new batch is created)",
              collected=False)
        await run.sink.persist()
        return
    for key, outcome in reconciler.outcomes(batch.backend.missing_reason(state)):
        run.sink.accept(key, outcome)
    summary = reconciler.reconciliation()
    if summary.problems():
        concerned = (f"; the {summary.affected} request(s) concerned are error rows"
                     if summary.affected else "")
        run.warnings.append(
            f"batch {batch.batch_id} ({batch.backend.provider}): its results do not match "
            f"its {summary.requests} requests: {'; '.join(summary.problems())}{concerned}")
    if await run.sink.persist():
        run.store.collected(batch.backend.provider, batch.batch_id)
    if run.events is not None:
        run.events.collected(batch.backend.provider, state, summary)


def _leave_running(run: _Run, batch: _Tracked, why: str) -> None:
    """Stop waiting for ``batch``: its requests are errors this time, collected next time."""
    run.still_running.append(batch.label)
    _fail(run, batch.keys, f"{why}; it keeps running at the provider: rerun this command "
                           "to collect its results (no new batch is created)", collected=False)


def _times(number: int) -> str:
    return "poll" if number == 1 else f"{number} polls"


def _fail(run: _Run, keys: Iterable[str], reason: str, *, collected: bool = True) -> None:
    """Give ``keys`` an error result: the provider's (``collected``), or none yet."""
    error = ProviderServiceError(reason) if collected else ResultNotCollected(reason)
    for key in keys:
        run.sink.accept(key, error)
