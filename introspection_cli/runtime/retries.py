"""How hard the runtime client tries: attempts, waits between them, the per-answer deadline.

Each setting has a sane range (``INTROSPECTION_HTTP_*`` outside it is exit 2
before any request), and retries are never closer together than
:data:`MIN_RETRY_WAIT`, whatever ``Retry-After`` says.
"""

from __future__ import annotations

import email.utils
import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from introspection_cli.errors import ConfigError

ATTEMPTS_ENV = "INTROSPECTION_HTTP_ATTEMPTS"
MAX_WAIT_ENV = "INTROSPECTION_HTTP_MAX_WAIT"
TIMEOUT_ENV = "INTROSPECTION_HTTP_TIMEOUT"

#: The most attempts per call: with waits doubling up to the cap, more is never useful.
MAX_ATTEMPTS = 20
#: The longest wait between attempts one may allow, and the longest deadline for one answer.
MAX_WAIT_LIMIT = 600.0
MAX_TIMEOUT = 3600.0
#: The shortest wait between two attempts, even when the runtime says ``Retry-After: 0``.
MIN_RETRY_WAIT = 0.25


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Total attempts per call, the longest wait between them, and ``timeout``: the
    wall-clock deadline for each whole answer, body included."""

    attempts: int = 4
    max_wait: float = 30.0
    timeout: float = 30.0
    backoff: float = 0.5  # first wait when the runtime gives no Retry-After; doubles each time

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> RetryPolicy:
        """The default policy, with overrides from ``INTROSPECTION_HTTP_*`` variables."""
        default = cls()
        attempts = _env_number(environ, ATTEMPTS_ENV, default.attempts, 1, MAX_ATTEMPTS)
        if attempts != int(attempts):
            raise ConfigError(f"{ATTEMPTS_ENV}={environ[ATTEMPTS_ENV]!r} is not a whole "
                              f"number from 1 to {MAX_ATTEMPTS}; fix or unset it")
        return cls(
            attempts=int(attempts),
            max_wait=_env_number(environ, MAX_WAIT_ENV, default.max_wait, 0, MAX_WAIT_LIMIT),
            timeout=_env_number(environ, TIMEOUT_ENV, default.timeout, 0.001, MAX_TIMEOUT),
        )

    def backoff_wait(self, attempt: int) -> float:
        """The wait after failed attempt number ``attempt`` (0-based) without Retry-After."""
        return min(self.backoff * 2.0 ** min(attempt, 30), self.max_wait)

    def spaced(self, wait: float) -> float:
        """``wait``, but never less than :data:`MIN_RETRY_WAIT`."""
        return max(wait, MIN_RETRY_WAIT)


def _env_number(environ: Mapping[str, str], name: str, default: float, minimum: float,
                maximum: float) -> float:
    raw = environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not minimum <= value <= maximum:  # NaN fails too
        raise ConfigError(f"{name}={raw!r} is not a number from {minimum:g} to {maximum:g}; "
                          "fix or unset it")
    return value


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP date), or None."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())
