"""The report of a ``judges eval``, built once: entries, raters, costs, comparisons, gates.

Every figure the report holds is worked out before the report value is made, so
nothing fills it in afterwards: each judge's entry with its priced usage, its
raters' ceiling and its model comparison, then the gates read off those entries,
then the :class:`~.report.EvalReport` itself. The report's rows are the run's
:class:`~introspection_cli.evaluation.outcomes.RowOutcome` values, not copies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from introspection_cli.evaluation.outcomes import NO_TOKENS, EvalRun, JudgeRun, RowOutcome
from introspection_cli.evaluation.outcomes import Usage as RunUsage
from introspection_cli.evaluation.outcomes import total_tokens as sum_tokens
from introspection_cli.pricing import PriceTable, finite_cost
from introspection_cli.reporting.gates import Gate, GateSettings, judge_gates
from introspection_cli.reporting.metrics import REPORT_SPLITS, stats_by_split
from introspection_cli.reporting.model import Provenance, by_judge, usage_json
from introspection_cli.reporting.report import (
    EvalReport,
    HeldOut,
    JudgeEntry,
    ModelRun,
    NeededTokens,
    Rejected,
    ReportGate,
    ReportUsage,
    Splits,
)

if TYPE_CHECKING:  # a type only: the comparison is loaded by a run with several models
    from introspection_cli.reporting.model_comparison import PriceOf

#: What a judge run's usage cost (None: no price for its model).
CostOf = Callable[[JudgeRun], float | None]


def assemble_report(run: EvalRun, provenance: Provenance, gates: GateSettings, *,
                    prices: PriceTable, batch: bool,
                    raters: Mapping[str, Mapping[str, Any]] | None = None
                    ) -> tuple[EvalReport, list[Gate]]:
    """The report of ``run`` and its gates. ``raters``: judge name -> its raters' ceiling
    (``raters`` in its entry), for the judges with an annotations file."""
    def cost_of(judge: JudgeRun) -> float | None:
        return prices.cost(judge.provider, judge.model, usage_json(judge.usage), batch=batch)

    def price(provider: str, model: str, usage: Mapping[str, int]) -> float | None:
        return prices.cost(provider, model, usage, batch=batch)

    entries = tuple(judge_entry(first, others, cost_of=cost_of,
                                raters=(raters or {}).get(first.name), price=price)
                    for first, *others in by_judge(run.judges))
    found = [gate for entry in entries for gate in judge_gates(entry, gates)]
    report = _report(run, provenance, entries, found, cost=_run_cost(run, prices, cost_of))
    return report, found


def build_report(run: EvalRun, provenance: Provenance | None = None) -> dict[str, Any]:
    """The JSON report of ``run`` alone: no gate, no price, no raters (what
    :func:`assemble_report` adds for a ``judges eval``)."""
    return _report(run, provenance or Provenance(),
                   tuple(judge_entry(first, others) for first, *others in by_judge(run.judges)),
                   (), cost=None).as_json()


def judge_entry(judge: JudgeRun, others: Sequence[JudgeRun] = (), *,
                cost_of: CostOf | None = None, raters: Mapping[str, Any] | None = None,
                price: PriceOf | None = None) -> JudgeEntry:
    """A judge's entry: its run with the first model; with more models, ``usage`` and
    ``models`` (the other models' runs on the same rows), each ``usage`` priced by
    ``cost_of`` (null without it), and their comparison priced by ``price``."""
    def usage(run: JudgeRun) -> ReportUsage:
        return report_usage(run.usage, cost=None if cost_of is None else cost_of(run),
                            needed=needed_tokens(run.rows))

    entry = JudgeEntry(
        judge.name, judge.provider, judge.model, judge.fingerprint,
        rejected=tuple(Rejected(row.line, row.code, row.message) for row in judge.rejected),
        splits=_splits(judge), rows=judge.rows,
        usage=usage(judge) if others else None,
        models=tuple(ModelRun(other.provider, other.model, other.fingerprint, _splits(other),
                              other.rows, usage(other)) for other in others),
        raters=raters)
    if not others:
        return entry
    # Loaded only by a run with several models.
    from introspection_cli.reporting.model_comparison import model_comparison_json

    return replace(entry, model_comparison=model_comparison_json(entry, price=price))


def report_usage(usage: RunUsage, *, cost: float | None = None,
                 needed: NeededTokens | None = None) -> ReportUsage:
    """A run's usage as the report holds it, with what it cost (None: no price known)."""
    return ReportUsage(usage.requests, usage.cached, usage.input_tokens, usage.output_tokens,
                       usage.batch_requests, usage.cached_input_tokens,
                       usage.cache_write_tokens, usage.rate_limited, usage.concurrency, cost,
                       needed)


def needed_tokens(rows: Sequence[RowOutcome]) -> NeededTokens:
    """The tokens the rows' replies used, whether they came in this run or from the cache
    (what the rows cost, as against what this run spent): the sums over the rows whose
    tokens are known, and ``unknown_rows``, those whose cached replies were stored
    without them (by an introspection from before they were kept)."""
    known = [row.tokens for row in rows if row.tokens is not None]
    total = sum_tokens(known) or NO_TOKENS
    return NeededTokens(total.input, total.output, total.cached_input, total.cache_write,
                        len(rows) - len(known))


def _splits(judge: JudgeRun) -> Splits:
    """The run's statistics by split, in report order, the test split held out or not."""
    stats = stats_by_split(judge.rows)
    splits: dict[str, Any] = {split: stats[split] for split in REPORT_SPLITS}
    if judge.held_out is not None:
        splits["test"] = HeldOut(judge.held_out)
    return splits


def _report(run: EvalRun, provenance: Provenance, entries: tuple[JudgeEntry, ...],
            gates: Sequence[Gate], *, cost: float | None) -> EvalReport:
    return EvalReport(
        recipe=run.recipe, judges=entries, usage=report_usage(run.usage, cost=cost),
        samples=run.samples,
        gates=tuple(ReportGate(gate.judge, gate.split, gate.statistic, gate.bound, gate.bar,
                               gate.value, gate.met) for gate in gates),
        tool_version=provenance.tool_version, created_at=provenance.created_at,
        git=provenance.git)


def _run_cost(run: EvalRun, prices: PriceTable, cost_of: CostOf) -> float | None:
    """What the run spent: null unless every model that used tokens has a price."""
    total: float | None = 0.0
    for judge in run.judges:
        cost = cost_of(judge)
        if cost is None and (judge.usage.input_tokens or judge.usage.output_tokens):
            total = None
        elif total is not None and cost is not None:
            total += cost
    return (finite_cost(total, "the run's cost")
            if prices.prices and total is not None else None)
