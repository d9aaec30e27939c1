"""The report of a ``judges eval``, built once: entries, raters, costs, comparisons, gates.

Every figure the report holds is worked out before the report value is made, so
nothing fills it in afterwards: each judge's entry with its priced usage, its
raters' ceiling and its model comparison, then the gates read off those entries,
then the report (:func:`~.model.report_document`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from introspection_cli.evaluation.outcomes import EvalRun, JudgeRun
from introspection_cli.pricing import PriceTable, finite_cost
from introspection_cli.reporting.gates import Gate, GateSettings, judge_gates
from introspection_cli.reporting.model import (
    CostOf,
    Provenance,
    by_judge,
    judge_json,
    report_document,
    usage_json,
)
from introspection_cli.reporting.model_comparison import PriceOf, model_comparison_json
from introspection_cli.reporting.report import EvalReport


def assemble_report(run: EvalRun, provenance: Provenance, gates: GateSettings, *,
                    prices: PriceTable, batch: bool,
                    raters: Mapping[str, Mapping[str, Any]] | None = None
                    ) -> tuple[EvalReport, list[Gate]]:
    """The report of ``run`` and its gates. ``raters``: judge name -> its raters' ceiling
    (``raters`` in its entry), for the judges with an annotations file."""
    def cost_of(judge: JudgeRun) -> float | None:
        return prices.cost(judge.provider, judge.model, usage_json(judge.usage), batch=batch)

    entries = [judge_json(first, others, cost_of=cost_of) for first, *others in
               by_judge(run.judges)]
    cost = _run_cost(run, prices, cost_of)
    entries = [_completed(entry, (raters or {}).get(entry["name"]),
                          lambda provider, model, usage: prices.cost(provider, model, usage,
                                                                     batch=batch))
               for entry in entries]
    found = [gate for entry in entries for gate in judge_gates(entry, gates)]
    # The JSON document is made by the one code that names its keys, then read as the value.
    report = report_document(run, provenance, judges=entries,
                             gates=[gate.as_json() for gate in found], cost=cost)
    return EvalReport.from_json(report), found


def _completed(entry: dict[str, Any], raters: Mapping[str, Any] | None,
               price: PriceOf) -> dict[str, Any]:
    """``entry`` with its raters' ceiling and, with several models, their comparison."""
    if raters is not None:
        entry = {**entry, "raters": raters}
    comparison = model_comparison_json(entry, price=price)
    return entry if comparison is None else {**entry, "model_comparison": comparison}


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
