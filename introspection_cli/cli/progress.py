"""The progress line ``judges eval`` draws on a terminal's stderr.

One :class:`StatusLine` is the last line of the terminal, redrawn in place;
the row progress and ``--batch``'s batch progress each own a part of it, so
they never overwrite each other. It is drawn only when stderr is a terminal
(never into a log or a pipe), uses no colour, and is cut to the terminal's
width so that a redraw never wraps onto a second line.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from introspection_cli.cli.status_line import StatusLine

if TYPE_CHECKING:
    from introspection_cli.cli.batch_progress import BatchProgress
    from introspection_cli.evaluation.runner import RunProgress

_T = TypeVar("_T")

#: Seconds between two redraws of the row progress (the last row is always drawn).
REDRAW_EVERY = 0.1


class RowProgress:
    """The run's :data:`~introspection_cli.evaluation.runner.ProgressCallback` on a terminal:
    ``37/120 rows, 4.1/s, ETA 20 s, 41 requests, 12 cache hits, 2 errors`` (no bar:
    the numbers say it, and the line fits 80 columns for most runs).

    The rate counts only rows finished by calls since the first report, so rows
    answered from the cache at the start do not make the ETA look short.
    """

    def __init__(self, line: StatusLine, *, eta: bool = True,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._line = line
        self._eta = eta
        self._clock = clock
        self._start: tuple[float, int] | None = None
        self._last_draw = -float("inf")

    def __call__(self, progress: RunProgress) -> None:
        now = self._clock()
        if self._start is None:
            self._start = (now, progress.rows_done)
        finished = progress.rows_done >= progress.rows_total
        if not finished and now - self._last_draw < REDRAW_EVERY:
            return
        self._last_draw = now
        self._line.show("rows", self.describe(progress, now))

    def describe(self, progress: RunProgress, now: float) -> str:
        done, total = progress.rows_done, progress.rows_total
        parts = [f"{done}/{total} rows"]
        if self._eta and self._start is not None:
            started, done_at_start = self._start
            elapsed, moved = now - started, done - done_at_start
            if moved > 0 and elapsed > 0:
                rate = moved / elapsed
                parts.append(f"{rate:.3g}/s")
                if done < total:
                    parts.append(f"ETA {_eta(max(total - done, 0) / rate)}")
        parts.append(f"{progress.requests} request{'s' if progress.requests != 1 else ''}")
        parts.append(f"{progress.cache_hits} cache hit{'s' if progress.cache_hits != 1 else ''}")
        parts.append(f"{progress.errors} error{'s' if progress.errors != 1 else ''}")
        if progress.waiting:
            parts.append(f"{progress.waiting} waiting for another run")
        return ", ".join(parts)


def _eta(seconds: float) -> str:
    """``45 s``, ``12 min``, ``3 h 5 min``: what is left, rounded the way people read it."""
    if seconds < 90:
        return f"{max(round(seconds), 1)} s"
    minutes = round(seconds / 60)
    if minutes < 90:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min"


def run_with_progress(run: Callable[[RowProgress | None, BatchProgress | None], _T], *,
                      batch: bool) -> _T:
    """``run(progress, batch_events)`` with the progress line drawn on stderr while it runs.

    Only on a terminal: a log or a pipe gets no redrawn line (``run`` gets None).
    With ``batch``, the batch progress shares the line, and an interrupted run says
    that its batches keep running.
    """
    from introspection_cli.cli.terminal import stream_redraws

    line = StatusLine(sys.stderr) if stream_redraws(sys.stderr) else None
    batches = None
    if batch:
        from introspection_cli.cli.batch_progress import BatchProgress

        batches = BatchProgress(sys.stderr, redraw=line is not None, line=line)
    # A batch run's rows land all at once when a batch ends: a rate or an ETA would mislead.
    progress = RowProgress(line, eta=not batch) if line is not None else None
    try:
        return run(progress, batches)
    except KeyboardInterrupt:
        if batches is not None:
            batches.interrupted()
        raise
    finally:
        if line is not None:
            line.clear()
