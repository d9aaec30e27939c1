"""Settling: each sample's reply or error becomes its result, and each row's results its outcome.

:class:`Settler` is what every dispatcher hands a sample's end to, direct or
through a batch: a reply is parsed and validated (:mod:`.verdict`) into a verdict,
which is cached, or an unusable reply's reason; an error is classified (a refusal
of the request as wrong, the provider failing after retries, a bad response) into
the sample's error. Either way the run ledger (:mod:`.run_ledger`) counts it, and
a claim on a request that got no verdict is let go for another run to take over.
:class:`OutcomeBuilder` then turns every plan's rows and their samples' results
into the run's :class:`~introspection_cli.evaluation.outcomes.EvalRun`, counting
the rows that are errors because the provider refused or failed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from introspection_cli.evaluation.fingerprint import judge_fingerprint
from introspection_cli.evaluation.outcomes import EvalRun, JudgeRun, RowOutcome, total_tokens
from introspection_cli.evaluation.plan import JudgePlan, PlannedRow
from introspection_cli.evaluation.providers import (
    ModelReply,
    ProviderBadResponse,
    ProviderError,
    ProviderRefused,
)
from introspection_cli.evaluation.run_ledger import PlanTally, RunLedger
from introspection_cli.evaluation.slots import Slot
from introspection_cli.evaluation.stopped import ProviderStopped, ResultNotCollected
from introspection_cli.evaluation.verdict import (
    InvalidReply,
    ParsedVerdict,
    parse_reply,
    reply_tokens,
)
from introspection_cli.evaluation.voting import SampleResult, decide

if TYPE_CHECKING:  # the cache's event-loop side: only a run that sends has one
    from introspection_cli.evaluation.cache_worker import CacheWorker


class Settler:
    """Turns replies and errors into the samples' results, for the run ledger to count.

    ``refusals`` says, one line per provider, endpoint and model, why the provider
    refused requests as wrong (the exit code and the message name it).
    """

    def __init__(self, ledger: RunLedger, cache: CacheWorker | None, *, batch: bool) -> None:
        self.ledger = ledger
        self.refusals: dict[tuple[str, str, str], str] = {}
        self._cache = cache
        self._batch = batch  # every call of a --batch run is a batch's

    def settle(self, slot: Slot, reply: ModelReply | ProviderError,
               parsed: ParsedVerdict | InvalidReply | None = None) -> None:
        """Turn a call's reply or error into the slot's result (and cache a verdict);
        ``parsed`` is the reply's verdict when it has been parsed already (a batch's)."""
        if slot.result is not None:
            return  # a batch's result for a sample another run's verdict settled first
        # Sent and answered: a stopped sample never was, an uncollected one is counted
        # by the run that collects it.
        if not isinstance(reply, ProviderStopped | ResultNotCollected):
            self.ledger.sent(slot, batch=self._batch)
        if isinstance(reply, ProviderError):
            slot.result = self._error_result(slot, reply)
        else:
            slot.result = self._reply_result(slot, reply, parsed)
        slot.request = None  # answered: its prompt is not needed any more
        self.ledger.settled(slot)

    def settle_shared(self, slot: Slot, verdict: ParsedVerdict) -> None:
        """Settle a sample with the verdict another run wrote to the cache: a cache hit."""
        if slot.result is not None:
            return
        slot.result, slot.request = SampleResult(verdict, cached=True), None
        self.ledger.cached(slot)
        self.ledger.settled(slot)

    def _error_result(self, slot: Slot, error: ProviderError) -> SampleResult:
        """The result of a sample whose call failed: a refusal, a bad response, or the
        provider failing (which is the only kind that makes the run exit 3)."""
        refused = isinstance(error, ProviderRefused) or (
            isinstance(error, ProviderStopped) and error.refused)
        service = not refused and not isinstance(error, ProviderBadResponse)
        if isinstance(error, ProviderRefused):
            plan = slot.plan
            self.refusals.setdefault(
                (plan.provider, error.endpoint, plan.model),
                f"the {plan.provider} provider refused requests for model {plan.model} at "
                f"{error.endpoint} as wrong (HTTP {error.status}): check the model name and "
                "the judge's llm settings")
        self._gave_no_verdict(slot)
        return SampleResult(None, str(error), service_failure=service, refused=refused)

    def _reply_result(self, slot: Slot, reply: ModelReply,
                      parsed: ParsedVerdict | InvalidReply | None) -> SampleResult:
        """The result of a sample the provider answered: its verdict (cached), or why the
        reply is not one."""
        self.ledger.used(slot, reply)
        if parsed is None:
            parsed = parse_reply(reply)
        if isinstance(parsed, ParsedVerdict):
            if self._cache is not None:
                self._cache.put(slot.key, parsed, slot.memo)
            return SampleResult(parsed)
        self._gave_no_verdict(slot)
        return SampleResult(None, parsed.reason, reply_tokens=reply_tokens(reply))

    def _gave_no_verdict(self, slot: Slot) -> None:
        self.ledger.failed()
        if self._cache is not None:
            self._cache.release(slot.key)  # another run may take it over


class OutcomeBuilder:
    """Every plan's row outcomes from the samples the ledger kept, once the run is over.

    ``service_failures`` and ``refused`` count the rows that are errors because the
    provider failed after retries, or refused the request as wrong.
    """

    def __init__(self) -> None:
        self.service_failures = 0
        self.refused = 0

    def eval_run(self, recipe: str, ledger: RunLedger, samples: int) -> EvalRun:
        """The run's outcomes: every plan's, in order, with the usage counted."""
        return EvalRun(recipe, tuple(self._judge_run(tally) for tally in ledger.tallies.values()),
                       ledger.usage, samples)

    def _judge_run(self, tally: PlanTally) -> JudgeRun:
        plan: JudgePlan = tally.plan
        tracked = tally.rows
        rows = tuple(self._row_outcome(row, [slot.result for slot in tracked.get(row.line, ())
                                             if slot.result is not None])
                     for row in plan.rows)
        return JudgeRun(plan.judge.name, plan.provider, plan.model, rows, plan.rejected,
                        fingerprint=judge_fingerprint(plan.judge, provider=plan.provider,
                                                      model=plan.model),
                        held_out=plan.held_out, usage=tally.usage)

    def _row_outcome(self, row: PlannedRow, samples: Sequence[SampleResult]) -> RowOutcome:
        if row.gate_error is not None:
            return RowOutcome(row.line, row.conversation_id, row.split, row.expected, "error",
                              error=row.gate_error, snapshot_hash=row.snapshot_hash)
        if row.gated:
            return RowOutcome(row.line, row.conversation_id, row.split, row.expected, "gated",
                              snapshot_hash=row.snapshot_hash)
        if len(samples) == 1 and samples[0].verdict is not None:  # the usual row: one verdict
            only, verdict = samples[0], samples[0].verdict
            return RowOutcome(row.line, row.conversation_id, row.split, row.expected,
                              verdict.verdict, samples=(verdict.verdict,),
                              reasoning=verdict.reasoning, cached=only.cached,
                              snapshot_hash=row.snapshot_hash, tokens=verdict.tokens)
        decision = decide(samples)
        if decision.outcome == "error":
            if any(s.refused for s in samples):
                self.refused += 1
            elif any(s.service_failure for s in samples):
                self.service_failures += 1
        return RowOutcome(row.line, row.conversation_id, row.split, row.expected,
                          decision.outcome, samples=tuple(s.outcome for s in samples),
                          unstable=decision.unstable, reasoning=decision.reasoning,
                          error=decision.error,
                          cached=bool(samples) and all(s.cached for s in samples),
                          snapshot_hash=row.snapshot_hash,
                          tokens=total_tokens(s.tokens for s in samples))
