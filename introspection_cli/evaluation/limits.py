"""How many calls go to a provider at once, and when to stop calling it at all.

:class:`AdaptiveLimiter` keeps at most ``limit`` calls in flight. The limit starts
at the ceiling (``--concurrency``); a 429 halves it (not below 1) and pauses new
calls for the ``Retry-After`` the provider asked for; each window of ``limit``
successes without a 429 lets it grow back by one, up to the ceiling. 429s of
calls that were already in flight when the limit last fell count once: they
answer the old limit, not the new one.

:class:`CircuitBreaker` opens after ``threshold`` consecutive calls that failed
the same hopeless way (could not connect or timed out after the SDK's retries;
or refused as a bad request) with no call answered since: every later call would
cost the same time or fail the same way, so the run stops making them.
"""

from __future__ import annotations

import asyncio
import contextvars
from dataclasses import dataclass

#: The limiter generation a call was started in, set by the call's own task.
_STARTED_IN: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "limiter_generation", default=None)
#: The longest pause a Retry-After may impose on new calls.
MAX_PAUSE_S = 120.0


class AdaptiveLimiter:
    """An additive-increase, multiplicative-decrease bound on calls in flight.

    :meth:`acquire` before a call, :meth:`release` after it, in the task that starts
    the call: the call's task (created after :meth:`acquire`) inherits the
    generation it started in, which :meth:`saw_rate_limit` reads.
    """

    def __init__(self, ceiling: int) -> None:
        self.ceiling = ceiling
        self.limit = ceiling
        self.lowest = ceiling
        self.rate_limited = 0  # 429 responses seen
        self.in_flight = 0
        self._generation = 0
        self._successes = 0
        self._paused_until = 0.0
        self._room = asyncio.Event()

    async def acquire(self) -> None:
        """Wait for room under the limit, and for any Retry-After pause to pass."""
        loop = asyncio.get_running_loop()
        while True:
            pause = self._paused_until - loop.time()
            if pause > 0:
                await asyncio.sleep(pause)
            elif self.in_flight >= self.limit:
                self._room.clear()
                await self._room.wait()
            else:
                break
        self.in_flight += 1
        _STARTED_IN.set(self._generation)

    def release(self) -> None:
        """A call finished, however it ended."""
        self.in_flight -= 1
        self._room.set()

    def succeeded(self) -> None:
        """A call got an answer: count it towards growing the limit back."""
        self._successes += 1
        if self._successes >= self.limit and self.limit < self.ceiling:
            self.limit += 1
            self._successes = 0
            self._room.set()

    def saw_rate_limit(self, retry_after: float | None) -> None:
        """The provider answered 429 to a call of the current task."""
        self.rate_limited += 1
        if retry_after is not None and retry_after > 0:
            now = asyncio.get_running_loop().time()
            self._paused_until = max(self._paused_until, now + min(retry_after, MAX_PAUSE_S))
        started = _STARTED_IN.get()
        if started is not None and started < self._generation:
            return  # started under a higher limit, which has been halved already
        self._generation += 1
        self.limit = max(1, self.limit // 2)
        self.lowest = min(self.lowest, self.limit)
        self._successes = 0


@dataclass
class CircuitBreaker:
    """Opens after ``threshold`` consecutive hopeless failures of one kind."""

    threshold: int = 5
    #: ``unreachable`` or ``refused``, once open; the last failure's message is ``reason``.
    opened_by: str | None = None
    reason: str = ""
    at_once: bool = False  # opened by one failure that no later call can avoid
    _kind: str | None = None
    _count: int = 0

    @property
    def open(self) -> bool:
        return self.opened_by is not None

    def answered(self) -> None:
        """The provider answered a call (any answer but a refusal)."""
        self._kind, self._count = None, 0

    def failed(self, kind: str, message: str, *, at_once: bool = False) -> bool:
        """A call failed hopelessly; ``at_once`` opens the breaker on this one failure
        (a certificate that does not verify will not verify next time either). True
        when this failure opened it."""
        if self.open:
            return False
        self._count = self._count + 1 if kind == self._kind else 1
        self._kind = kind
        if at_once or self._count >= self.threshold:
            self.opened_by, self.reason, self.at_once = kind, message, at_once
            return True
        return False
