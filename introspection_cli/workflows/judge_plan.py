"""``judges plan``: what a judge's certificate will take, before or during labelling.

For one judge: the test rows of each class from which the chance of a
certificate is at least ``--power`` (both classes together, computed exactly
from the binomial: :mod:`introspection_cli.certification.power`), at the rates
expected (``--expect-tpr``/``--expect-tnr`` used as given; else the judge's dev
figures, shrunk; else 0.9), for the bound the next ``judges certify`` will
decide with (Wilson for the first look at its test rows, the anytime-valid
bound once this judge version has looked at them); the labels to collect for
that at the current split ratios and class mix; and what the model calls of
certifying at the plan cost, from the price table, with each call's tokens
estimated as ``judges eval --dry-run`` estimates them, over the first rows of
the calibration file.

From files alone, as ``judges status``: no model call, no SDK imported. Printed by
:mod:`introspection_cli.reporting.render_plan` through the registry.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from introspection_cli.certification.bounds import BoundMethod
from introspection_cli.certification.power import PLAN_POWER
from introspection_cli.errors import CommandResult, UsageError, exit_code_for
from introspection_cli.recipe.model import Judge
from introspection_cli.reporting.plan_values import CallCost, CertificationPlan
from introspection_cli.reporting.registry import ReportKind, check_format, render
from introspection_cli.reporting.status_values import (
    PLANNED,
    DevFigures,
    Plan,
    RowCounts,
    rate_sources,
)
from introspection_cli.workflows.status import (
    count_rows,
    dev_figures,
    make_plan,
    next_bound,
)

#: Rows whose prompts are rendered to estimate a call's tokens: the first of the file.
PRICED_ROWS = 16


@dataclass(frozen=True)
class PlanSettings:
    """What ``judges plan`` is asked: the judge, the expected rates, the bar, the power."""

    judge: str
    expect: Mapping[str, float]  # label -> the rate expected, used as given
    bar: float = 0.8
    power: float = PLAN_POWER
    fmt: str = "text"

    def check(self) -> None:
        if not self.judge:
            raise UsageError("judges plan needs --judge NAME: a plan is per judge")
        flags = {"pass": "--expect-tpr", "fail": "--expect-tnr"}
        for flag, value in (*((flags[k], v) for k, v in self.expect.items()),
                            ("--bar", self.bar), ("--power", self.power)):
            if not (math.isfinite(value) and 0 < value < 1):
                raise UsageError(f"{flag} {value:g} must be a number above 0 and below 1")
        check_format(ReportKind.PLAN, self.fmt)


@dataclass(frozen=True)
class _Inputs:
    """What a judge's plan is made from, read from its files and the ledger."""

    counts: RowCounts
    fingerprint: str
    bound: BoundMethod
    looks: int
    dev: DevFigures | None


def _inputs(judge: Judge, *, cache_dir: Path, keep: int = 0) -> _Inputs:
    from introspection_cli.certification.exposure import looks_under
    from introspection_cli.certification.exposure_file import exposure_path, read_looks
    from introspection_cli.evaluation.fingerprint import judge_fingerprint
    from introspection_cli.evaluation.ledger import LEDGER_FILE, Ledger

    counts = count_rows(judge, None, keep=keep) if judge.calibration_path.is_file() \
        else RowCounts()
    fingerprint = judge_fingerprint(judge)
    looks = read_looks(exposure_path(judge.path.parent, judge.name))
    dev: DevFigures | None = None
    if counts.dev_labels:
        ledger = Ledger(cache_dir / LEDGER_FILE)
        try:
            dev = dev_figures(counts.dev_labels, ledger.outcomes(judge.name, fingerprint))
        finally:
            ledger.close()
    return _Inputs(counts, fingerprint, next_bound(looks, fingerprint, counts.test_rows),
                   looks_under(looks, (fingerprint, 1), counts.test_rows), dev)


def plan_judge(judge: Judge, settings: PlanSettings, *, cache_dir: Path) -> CertificationPlan:
    """The plan of one judge, from its files and the evaluation ledger's dev outcomes."""
    found = _inputs(judge, cache_dir=cache_dir, keep=PRICED_ROWS)
    plan = make_plan(found.counts, found.dev, settings.bar, found.bound, given=settings.expect,
                     power=settings.power)
    return CertificationPlan(judge.name, found.fingerprint, plan, found.bound, found.looks,
                             rate_sources(found.dev, plan),
                             certification_cost(judge, found.counts, plan),
                             found.counts.rejected_rows)


def planned_test_rows(judge: Judge, *, cache_dir: Path, bar: float = 0.8
                      ) -> dict[str, int | None]:
    """label -> the test rows the judge's plan asks for at its default rates (``judges
    split --fill-test``); None when the bar is out of reach at the planned rate."""
    found = _inputs(judge, cache_dir=cache_dir)
    plan = make_plan(found.counts, found.dev, bar, found.bound)
    return {label: plan.power.classes[label].rows for label in PLANNED}


def certification_cost(judge: Judge, counts: RowCounts, plan: Plan) -> CallCost:
    """The calls ``judges certify`` makes at the plan (every test row the gate matches, the
    rows labels will add included), priced at the tokens of the file's first rows."""
    from introspection_cli.pricing import load_prices

    held = sum(counts.table["test"][label] for label in ("pass", "fail", "not_applicable"))
    rows = held + (plan.power.reach_test or 0)
    gated_share = (counts.gate_misses or 0) / counts.rows if counts.rows else 0.0
    calls = round(rows * (1 - gated_share))
    provider, model = judge.llm.provider, judge.llm.model
    tokens = _tokens_per_call(judge, counts.sample)
    if tokens is None:
        return CallCost(calls, provider, model, None, None, None, 0)
    (per_in, per_out), sampled = tokens
    usage = {"input_tokens": round(calls * per_in), "output_tokens": round(calls * per_out)}
    return CallCost(calls, provider, model, usage["input_tokens"], usage["output_tokens"],
                    load_prices().cost(provider, model, usage), sampled)


def _tokens_per_call(judge: Judge, rows: Sequence[Any]) -> tuple[tuple[float, float], int] | None:
    """Mean estimated (input, output) tokens of the requests for ``rows`` (those the gate
    matches), and how many there were; None when there is none."""
    from introspection_cli.evaluation.gate import GateTimeout, evaluate_gate
    from introspection_cli.evaluation.plan import build_request
    from introspection_cli.evaluation.tokens import request_tokens

    estimates = []
    for row in rows:
        events = row.judge_input.get("events")
        try:
            gate = evaluate_gate(judge.gate, events if isinstance(events, list) else [])
        except GateTimeout:
            continue
        if gate.applies:
            request = build_request(judge, judge.llm.provider, judge.llm.model,
                                    row.judge_input, gate)
            estimates.append(request_tokens(request))
    if not estimates:
        return None
    count = len(estimates)
    return (sum(i for i, _ in estimates) / count, sum(o for _, o in estimates) / count), count


def plan_command(path: Path, settings: PlanSettings, *,
                 cache_dir: Path | None = None) -> CommandResult:
    """``judges plan``: the plan to print; exit 1 when rows of the file are rejected."""
    from introspection_cli.evaluation.cache_dir import default_cache_dir
    from introspection_cli.recipe.selection import load_valid_recipe, select_judges

    settings.check()
    recipe, warnings = load_valid_recipe(path, (settings.judge,))
    judge = recipe.judges.get(settings.judge)
    if judge is None:  # before any label a judge has no calibration file, and may be planned
        select_judges(recipe, (settings.judge,))  # raises: no judge of that name
        raise AssertionError("unreachable")  # pragma: no cover
    planned = plan_judge(judge, settings, cache_dir=cache_dir or default_cache_dir())
    stdout = render(ReportKind.PLAN, check_format(ReportKind.PLAN, settings.fmt), planned)
    problems = [f"judge {judge.name}: {planned.rejected} calibration row(s) rejected; "
                f"`introspection check {path}` lists them"] if planned.rejected else []
    return CommandResult(stdout, (*problems, *(f"warning: {warning}" for warning in warnings)),
                         exit_code_for(problems=bool(problems)))
