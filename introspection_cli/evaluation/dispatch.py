"""Sending a run's uncached samples: the :class:`Dispatcher` interface, and direct calls.

A dispatcher takes every provider's rows (:class:`.prepare.ProviderRows`, read up
to each provider's first miss) and the settings of the providers to call,
and turns every slot still without a result into a reply or a :class:`ProviderError`,
handed to ``settle`` (:class:`~introspection_cli.evaluation.settle.Settler`:
validating, caching, counting). There are two: :class:`DirectDispatcher`, one call
per sample, and :class:`~introspection_cli.evaluation.batch.dispatcher.BatchDispatcher`,
the providers' batch APIs (``--batch``).

:class:`DirectDispatcher` calls each provider from its own task. It reads the next
row only when the provider's limiter has room, so rendering keeps pace with the
calls, and calls go out as fast as answers allow, up to ``--concurrency`` at once.
When a provider's breaker opens, its calls in flight are cancelled and no more are
made: its remaining slots are settled with the reason. A rejected API key stops
the whole run.
"""

from __future__ import annotations

import abc
import asyncio
import dataclasses
from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any

from introspection_cli.errors import ConfigError
from introspection_cli.evaluation.limits import AdaptiveLimiter, CircuitBreaker
from introspection_cli.evaluation.outcomes import Usage
from introspection_cli.evaluation.providers import (
    ModelReply,
    Provider,
    ProviderAuthError,
    ProviderError,
    ProviderFactory,
    ProviderRefused,
    ProviderSettings,
    ProviderUnreachable,
)
from introspection_cli.evaluation.slots import RowSlots, Slot
from introspection_cli.evaluation.stopped import AuthAbort as AuthAbort
from introspection_cli.evaluation.stopped import ProviderStopped as ProviderStopped

if TYPE_CHECKING:
    from introspection_cli.evaluation.prepare import ProviderRows

#: Turns one slot's reply or error into its result.
Settle = Callable[[Slot, ModelReply | ProviderError], None]
#: A provider's rows without the samples other runs are asking for (:mod:`.sharing`).
Shared = Callable[[AsyncIterator[RowSlots]], AsyncIterator[RowSlots]]


class Dispatcher(abc.ABC):
    """Sends a run's uncached samples and settles each of them."""

    @property
    @abc.abstractmethod
    def requests(self) -> int:
        """Requests made so far that the run's usage does not count yet (progress)."""

    @abc.abstractmethod
    async def run(self, rows: ProviderRows, settings: Mapping[str, ProviderSettings]) -> None:
        """Settle every slot of ``rows`` that has no result yet; ``settings`` holds the
        providers to call (those with a row to send) and how."""

    def record_usage(self, usage: Usage) -> None:  # noqa: B027 - nothing to add by default
        """Add to the run's ``usage`` what this dispatcher counted, once it has run."""


class DirectDispatcher(Dispatcher):
    """One call per sample through each provider's SDK, at most ``concurrency`` at once."""

    def __init__(self, factory: ProviderFactory, settle: Settle, *, concurrency: int,
                 shared: Shared, started: Callable[[], None]) -> None:
        self._factory = factory
        self._settle = settle
        self._concurrency = concurrency
        self._shared = shared
        self._started = started
        self._senders: dict[str, ProviderSender] = {}

    @property
    def requests(self) -> int:
        return sum(sender.requests for sender in self._senders.values())

    async def run(self, rows: ProviderRows, settings: Mapping[str, ProviderSettings]) -> None:
        try:
            for name, options in settings.items():
                limiter = AdaptiveLimiter(self._concurrency)
                provider = self._factory(name, dataclasses.replace(
                    options, on_rate_limit=limiter.saw_rate_limit))
                self._senders[name] = ProviderSender(provider, self._settle, limiter=limiter)
            self._started()
            async with asyncio.TaskGroup() as group:
                for name, sender in self._senders.items():
                    group.create_task(sender.run(self._shared(rows.of(name))))
        except BaseExceptionGroup as failed:
            # Task groups nest (one per provider): what failed is the first leaf.
            error = _first_leaf(failed)
            if isinstance(error, AuthAbort):
                raise ConfigError(f"{error.error}; the run was stopped before calling the "
                                  "model for the remaining rows") from error.error
            raise error from None
        finally:
            for sender in self._senders.values():
                await sender.provider.aclose()

    def record_usage(self, usage: Usage) -> None:
        usage.requests += self.requests
        limiters = [sender.limiter for sender in self._senders.values()]
        usage.concurrency = min(limiter.limit for limiter in limiters) if limiters else None
        usage.rate_limited = sum(limiter.rate_limited for limiter in limiters)


def _first_leaf(group: BaseExceptionGroup[Any]) -> BaseException:
    """The first exception in ``group`` that is not a group (task groups nest)."""
    first = group.exceptions[0]
    return _first_leaf(first) if isinstance(first, BaseExceptionGroup) else first


class ProviderSender:
    """One provider's calls, at most ``limiter.limit`` at once, stopped by its breaker."""

    def __init__(self, provider: Provider, settle: Settle, *, limiter: AdaptiveLimiter,
                 breaker: CircuitBreaker | None = None) -> None:
        self.provider = provider
        self.limiter = limiter
        self.breaker = breaker or CircuitBreaker()
        #: Requests made to the provider so far.
        self.requests = 0
        self._settle = settle
        self._in_flight: dict[asyncio.Task[None], Slot] = {}

    async def run(self, rows: AsyncIterator[RowSlots]) -> None:
        """Settle every slot of ``rows`` that has no result yet."""
        async with asyncio.TaskGroup() as group:
            async for samples in rows:
                for slot in samples:
                    if slot.result is not None:
                        continue
                    if not self.breaker.open:
                        await self.limiter.acquire()
                        if not self.breaker.open:
                            task = group.create_task(self._call(slot))
                            self._in_flight[task] = slot
                            # A callback, not a `finally`: it runs even for a task
                            # cancelled before it started.
                            task.add_done_callback(self._finished)
                            await asyncio.sleep(0)  # let it start before the next row
                            continue
                        self.limiter.release()
                    self._settle(slot, self._stopped())

    async def _call(self, slot: Slot) -> None:
        assert slot.request is not None
        self.requests += 1
        try:
            reply: ModelReply | ProviderError = await self.provider.complete(slot.request)
        except ProviderAuthError as exc:
            raise AuthAbort(exc) from exc
        except ProviderError as exc:
            reply = exc
        self._record(reply)
        self._settle(slot, reply)

    def _finished(self, task: asyncio.Task[None]) -> None:
        slot = self._in_flight.pop(task)
        self.limiter.release()
        if task.cancelled() and self.breaker.open and slot.result is None:
            self._settle(slot, self._stopped())

    def _record(self, reply: ModelReply | ProviderError) -> None:
        """Tell the limiter and the breaker how the call went; when the breaker opens,
        the calls still in flight are cancelled (they would fail the same way)."""
        if not isinstance(reply, ProviderError):
            self.limiter.succeeded()
        kind = ("refused" if isinstance(reply, ProviderRefused)
                else "unreachable" if isinstance(reply, ProviderUnreachable) else None)
        if kind is None:
            self.breaker.answered()
        elif self.breaker.failed(kind, str(reply), at_once=getattr(reply, "fatal", False)):
            for task in list(self._in_flight):
                if task is not asyncio.current_task():
                    task.cancel()

    def _stopped(self) -> ProviderStopped:
        breaker = self.breaker
        if breaker.at_once:
            return ProviderStopped(f"provider unreachable: not sent ({breaker.reason})",
                                   refused=False)
        if breaker.opened_by == "refused":
            return ProviderStopped(f"not sent: the provider refused the last "
                                   f"{breaker.threshold} requests ({breaker.reason})",
                                   refused=True)
        return ProviderStopped(f"provider unreachable: not sent, as {breaker.threshold} "
                               f"requests in a row got no answer ({breaker.reason})",
                               refused=False)
