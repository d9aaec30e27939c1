"""The run ledger: what one run of ``judges eval`` has counted so far, and its progress.

Not the evaluation ledger of :mod:`.ledger` (outcomes kept on disk from run to
run): this one lives for a run. Every row's samples are kept for the report in
the :class:`PlanTally` of their plan (one judge with one model), which also holds
the plan's own usage; the ledger adds up the run's usage, counts the rows done
and the samples ended in errors, and tells the progress display each time a row
is done. The settler (:mod:`.settle`) records each sample's end here; the
dispatchers' own request counters and the samples waiting for other runs are read
live when progress is shown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence, Sized
from dataclasses import dataclass, field
from typing import Protocol

from introspection_cli.evaluation.outcomes import Usage
from introspection_cli.evaluation.plan import JudgePlan
from introspection_cli.evaluation.providers import ModelReply
from introspection_cli.evaluation.slots import RowSlots, Slot


@dataclass(frozen=True, slots=True)
class RunProgress:
    """How far a run is: what a progress display shows."""

    rows_done: int
    rows_total: int
    #: Model calls made so far (with ``--batch``: batch results collected).
    requests: int = 0
    #: Samples answered from the verdict cache.
    cache_hits: int = 0
    #: Samples that ended as errors so far (a provider failure, an unusable reply).
    errors: int = 0
    #: Samples waiting for the verdict another run on the same cache is asking for.
    waiting: int = 0


#: Called with the run's progress as rows finish.
ProgressCallback = Callable[[RunProgress], None]


class Sending(Protocol):
    """What sends requests (a dispatcher): its count so far, for the progress line."""

    @property
    def requests(self) -> int:
        """Requests sent so far and not yet in the run's usage."""


@dataclass(slots=True, eq=False)
class PlanTally:
    """One plan's part of the run: its rows' samples as tracked, and its usage."""

    plan: JudgePlan
    usage: Usage = field(default_factory=Usage)
    #: Each tracked row's samples, by the row's calibration line (one row per line).
    rows: dict[int, RowSlots] = field(default_factory=dict)
    #: Of the rows not done yet, how many samples are still without a result, by line.
    pending: dict[int, int] = field(default_factory=dict)


class RunLedger:
    """Counts a run as it goes: rows done, samples' ends, usage; shows progress."""

    def __init__(self, plans: Sequence[JudgePlan], progress: ProgressCallback | None) -> None:
        #: The run's usage (each plan's own is in its tally).
        self.usage = Usage()
        #: Each plan's tally. A plan is compared by identity (two plans of one judge and
        #: one model, ``--model m --model m``, stay two).
        self.tallies: dict[JudgePlan, PlanTally] = {plan: PlanTally(plan) for plan in plans}
        self.rows_total = sum(len(plan.rows) for plan in plans)
        # Gated rows and gate errors make no call: they are done before anything runs.
        self.rows_done = sum(1 for plan in plans for row in plan.rows if not row.calls_model)
        #: Samples that ended as errors.
        self.sample_errors = 0
        #: What sends requests (their counts are read for progress).
        self.senders: list[Sending] = []
        #: The groups of samples waiting for other runs' verdicts.
        self.waiting: list[Sized] = []
        self._progress = progress

    def track(self, samples: RowSlots) -> None:
        """Keep a row's samples for the report; count it as done or pending."""
        first = samples[0]
        tally = self.tallies[first.plan]
        tally.rows[first.row.line] = samples
        hits = pending = 0
        for slot in samples:
            if slot.result is None:
                pending += 1
            elif slot.result.cached:
                hits += 1
        self.usage.cached += hits
        tally.usage.cached += hits
        if pending:
            tally.pending[first.row.line] = pending
        else:
            self.rows_done += 1

    def track_all(self, rows: Iterable[RowSlots]) -> None:
        """:meth:`track` every row of ``rows``."""
        for samples in rows:
            self.track(samples)

    def sent(self, slot: Slot, *, batch: bool) -> None:
        """``slot``'s request was sent and answered (with ``batch``: through a batch)."""
        usage = self.tallies[slot.plan].usage
        usage.requests += 1
        if batch:
            usage.batch_requests += 1

    def cached(self, slot: Slot) -> None:
        """``slot`` was settled from the cache after all (another run's verdict)."""
        self.usage.cached += 1
        self.tallies[slot.plan].usage.cached += 1

    def used(self, slot: Slot, reply: ModelReply) -> None:
        """Count the tokens of ``slot``'s reply, for the run and for its plan."""
        for usage in (self.usage, self.tallies[slot.plan].usage):
            usage.input_tokens += reply.input_tokens
            usage.output_tokens += reply.output_tokens
            usage.cached_input_tokens += reply.cached_input_tokens
            usage.cache_write_tokens += reply.cache_write_tokens

    def failed(self) -> None:
        """A sample ended as an error."""
        self.sample_errors += 1

    def settled(self, slot: Slot) -> None:
        """``slot`` has its result: its row is done with its last sample."""
        pending = self.tallies[slot.plan].pending
        line = slot.row.line
        pending[line] -= 1
        if pending[line] == 0:
            self.rows_done += 1
            self.report_progress()

    def report_progress(self) -> None:
        """Tell the progress display how far the run is."""
        if self._progress is not None:
            requests = self.usage.requests + sum(sender.requests for sender in self.senders)
            self._progress(RunProgress(self.rows_done, self.rows_total, requests,
                                       self.usage.cached, self.sample_errors,
                                       sum(len(waiting) for waiting in self.waiting)))
