"""What ``judges eval --batch`` prints on stderr: batch ids, their progress, and how to resume.

Batch ids are printed whatever stderr is (a CI log needs them as much as a
terminal does). On a terminal the batches' progress is one line redrawn in
place (its part of the shared :class:`~introspection_cli.cli.status_line.StatusLine`,
beside the rows' progress); elsewhere a line is printed when a batch's status
changes, not on every poll.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from introspection_cli.cli.status_line import StatusLine
from introspection_cli.diagnostics import escape_text

if TYPE_CHECKING:
    from introspection_cli.evaluation.batch import BatchOptions, BatchState
    from introspection_cli.evaluation.batch.reconcile import Reconciliation


class BatchProgress:
    """The :class:`~introspection_cli.evaluation.batch.BatchEvents` the CLI prints."""

    def __init__(self, stream: TextIO, *, redraw: bool, line: StatusLine | None = None) -> None:
        self._stream = stream
        self._redraw = redraw
        self._status = line or StatusLine(stream)
        self._states: dict[str, BatchState] = {}
        #: ``provider batch_id`` of every batch this run submitted or resumed.
        self.batches: list[str] = []

    def submitted(self, provider: str, batch_id: str, requests: int, *, resumed: bool) -> None:
        label = _label(provider, batch_id)
        self.batches.append(label)
        what = (f"resumed ({requests} requests, submitted by an earlier run)" if resumed
                else f"{requests} requests submitted")
        self._line(f"batch {label}: {what}")

    def waiting(self, batches: int, options: BatchOptions) -> None:
        if options.max_wait == 0:
            return  # not waiting: the end of the run says what is still running
        self._line(f"waiting for {batches} batch{'es' if batches != 1 else ''} (first poll in "
                   f"{duration(options.poll_interval)}, then less often; at most "
                   f"{duration(options.max_wait)}); Ctrl-C stops waiting, the batches keep "
                   "running at the provider, and rerunning this command collects them")

    def polled(self, provider: str, state: BatchState) -> None:
        label = _label(provider, state.batch_id)
        before = self._states.get(label)
        self._states[label] = state
        if self._redraw:
            parts = [f"{name} {s.status} {s.done}/{s.total}" for name, s in self._states.items()
                     if not s.ended]
            self._status.show("batches", " | ".join(parts))
        elif before is None or before.status != state.status:
            self._line(f"batch {label}: {escape_text(state.status)}, {state.done}/{state.total} "
                       "done")

    def collected(self, provider: str, state: BatchState,
                  reconciled: Reconciliation) -> None:
        self._states.pop(_label(provider, state.batch_id), None)
        problems = reconciled.problems()
        mismatch = f" ({'; '.join(problems)})" if problems else ""
        self._line(f"batch {_label(provider, state.batch_id)}: {escape_text(state.status)}; "
                   f"{reconciled.results} results, {reconciled.failed} failed{mismatch}")

    def interrupted(self) -> None:
        """Say what became of the batches when the run is interrupted."""
        if self.batches:
            self._line(f"interrupted: batch(es) {', '.join(self.batches)} keep running at the "
                       "provider; rerun the same command to collect their results (nothing "
                       "is submitted again)")

    def finish(self) -> None:
        self._status.clear()

    def _line(self, text: str) -> None:
        self.finish()
        self._stream.write(f"introspection: {text}\n")
        self._stream.flush()


def _label(provider: str, batch_id: str) -> str:
    return f"{provider} {escape_text(batch_id)}"


def duration(seconds: float) -> str:
    """``seconds`` the way a person says it: 0.05 s, 100 s, 5 min, 25 h."""
    if seconds < 120:
        return f"{seconds:g} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.3g} h"
