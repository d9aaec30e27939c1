"""Sending a provider's uncached samples: direct calls, adaptively concurrent, with a breaker.

A dispatcher takes one provider's rows (:func:`~introspection_cli.evaluation.slots.row_slots`)
and turns every slot still without a result into a reply or a :class:`ProviderError`,
handed to ``settle``, which the runner owns (validating, caching, counting). Another
way of sending (a provider's batch API) is another :class:`Dispatcher`.

:class:`DirectDispatcher` reads the next row only when the limiter has room, so
rendering keeps pace with the calls, and calls go out as fast as answers allow, up
to ``--concurrency`` at once. When the breaker opens, the calls in flight are
cancelled and no more are made: the remaining slots are settled with the reason.
"""

from __future__ import annotations

import abc
import asyncio
from collections.abc import AsyncIterator, Callable

from introspection_cli.evaluation.limits import AdaptiveLimiter, CircuitBreaker
from introspection_cli.evaluation.providers import (
    ModelReply,
    Provider,
    ProviderAuthError,
    ProviderError,
    ProviderRefused,
    ProviderUnreachable,
)
from introspection_cli.evaluation.slots import RowSlots, Slot
from introspection_cli.evaluation.stopped import AuthAbort as AuthAbort
from introspection_cli.evaluation.stopped import ProviderStopped as ProviderStopped

#: Turns one slot's reply or error into its result.
Settle = Callable[[Slot, ModelReply | ProviderError], None]


class Dispatcher(abc.ABC):
    """Sends one provider's uncached samples and settles each of them."""

    #: Requests made to the provider so far.
    requests: int = 0

    @abc.abstractmethod
    async def run(self, rows: AsyncIterator[RowSlots]) -> None:
        """Settle every slot of ``rows`` that has no result yet."""


class DirectDispatcher(Dispatcher):
    """One call per sample through the provider's SDK, at most ``limiter.limit`` at once."""

    def __init__(self, provider: Provider, settle: Settle, *, limiter: AdaptiveLimiter,
                 breaker: CircuitBreaker | None = None) -> None:
        self.provider = provider
        self.limiter = limiter
        self.breaker = breaker or CircuitBreaker()
        self.requests = 0
        self._settle = settle
        self._in_flight: dict[asyncio.Task[None], Slot] = {}

    async def run(self, rows: AsyncIterator[RowSlots]) -> None:
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
