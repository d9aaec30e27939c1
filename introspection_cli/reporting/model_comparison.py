"""``--model`` given more than once: each judge's models compared on the same rows.

The question after "is this judge good?" is "is a cheaper model as good?". The
first ``--model`` is the reference: the judge's report entry, its gates, a
baseline comparison, ``judges label --review`` and ``judges estimate --report``
all read the first model's run, exactly as in a single-model report. Each
other model's run is in the entry's ``models``, and this module adds
``model_comparison``: per model, on split ``scored`` (every row the run
evaluated), agreement, TPR, TNR, kappa, errors, the tokens the rows need
(from the cache or not) and, when a price is known, their cost and what this run
spent, and McNemar's mid-p test against the first model over the rows both
scored (neither an error), with the paired difference in agreement.

Part of the comparisons layer: it reads the typed report entry a run builds (a
report read from disk keeps the ``model_comparison`` it was written with) and
imports no renderer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from introspection_cli.reporting.metrics import SCORED, SplitStats
from introspection_cli.reporting.report import JudgeEntry, ModelRun, ReportUsage, scored_of

if TYPE_CHECKING:  # the paired test is loaded only by a run that compares models
    from introspection_cli.reporting.baseline import McNemar

#: The split models are compared on: every evaluated row.
COMPARED_SPLIT = SCORED

#: (provider, model, the run's usage for one judge) -> cost in US dollars, or None when
#: no price is known. The seam for a price table; without one, cost is null.
PriceOf = Callable[[str, str, Mapping[str, int]], float | None]


@dataclass(frozen=True, slots=True)
class ModelResult:
    """One model's numbers for one judge; ``versus_first`` is None for the first model.

    ``needed`` is the tokens the rows need, whether their replies came in this run or
    from the cache (None when some cached replies' tokens are unknown: ``unknown_rows``
    of them); ``cost`` is their price, ``spent`` the price of what this run's requests
    used. Both None without a price; ``cost`` also when ``needed`` is.
    """

    provider: str
    model: str
    stats: SplitStats  # the model's statistics on COMPARED_SPLIT
    needed: Mapping[str, int] | None
    unknown_rows: int
    cost: float | None
    spent: float | None
    versus_first: McNemar | None

    def as_json(self) -> dict[str, Any]:
        test = self.versus_first
        stats = self.stats.as_json()
        return {
            "provider": self.provider, "model": self.model,
            **{key: stats[key] for key in ("n", "judged", "gated", "errors", "agreement",
                                           "na_agreement", "tpr", "tnr", "kappa")},
            "input_tokens": None if self.needed is None else self.needed["input_tokens"],
            "output_tokens": None if self.needed is None else self.needed["output_tokens"],
            "unknown_token_rows": self.unknown_rows,
            "cost": self.cost,
            "spent": self.spent,
            "mcnemar": None if test is None else {
                "paired": test.paired, "improved": test.improved, "regressed": test.regressed,
                "p_value": test.p_value,
                "difference": None if test.difference is None else test.difference.as_json(),
            },
        }


def compare_models(judge: JudgeEntry, *,
                   price: PriceOf | None = None) -> tuple[ModelResult, ...]:
    """The comparison of a judge's report entry; empty for a single-model entry."""
    if not judge.models or judge.usage is None:
        return ()
    from introspection_cli.reporting.baseline import paired_test

    first_rows = {row.conversation_id: row for row in judge.rows}
    results = [_result(judge, judge.usage, None, price)]
    for other in judge.models:
        pairs = [(first_rows[row.conversation_id], row)
                 for row in other.rows if row.conversation_id in first_rows]
        results.append(_result(other, other.usage, paired_test("all", pairs), price))
    return tuple(results)


def _result(run: JudgeEntry | ModelRun, usage: ReportUsage, test: McNemar | None,
            price: PriceOf | None) -> ModelResult:
    # A run's usage has no "needed" only in a report written before it was kept.
    counted = usage.needed
    unknown = counted.unknown_rows if counted is not None else len(run.rows)
    needed = counted.as_json() if counted is not None and unknown == 0 else None

    def price_of(tokens: Mapping[str, int] | None) -> float | None:
        return None if price is None or tokens is None else price(run.provider, run.model,
                                                                   tokens)

    stats = scored_of(run.splits, f"model {run.model}")
    return ModelResult(run.provider, run.model, stats, needed, unknown, price_of(needed),
                       price_of(usage.as_json()), test)


def model_comparison_json(judge: JudgeEntry, *,
                          price: PriceOf | None = None) -> dict[str, Any] | None:
    """The ``model_comparison`` member of a judge's report entry evaluated with several
    models; None for a single-model entry."""
    results = compare_models(judge, price=price)
    if not results:
        return None
    return {"split": COMPARED_SPLIT, "models": [result.as_json() for result in results]}
