"""``judges estimate --design random --rows FILE``: PPI++ when the labels are a random sample.

FILE holds production rows, some labelled (``expected`` set) and drawn at random
from the same conversations as the others. The judge runs over every row
(runner, verdict cache, ``--batch``, progress as in ``judges eval``); θ is then
estimated by prediction-powered inference (:mod:`introspection_cli.estimation.ppi`),
beside the labelled rows' own Wilson interval and the effective sample size.

Before PPI is used the design is checked: a labelled set whose verdict mix differs
from the unlabelled rows' beyond chance (a two-sample test at 1%) is not a random
sample of them, and PPI is refused (a balanced or hand-picked gold set is what the
calibration correction, ``estimate`` without ``--design``, is for).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from introspection_cli.errors import CommandResult, ExitCode, UsageError, exit_code_for
from introspection_cli.estimation.counts import EstimateRefused
from introspection_cli.evaluation.fingerprint import judge_fingerprint
from introspection_cli.evaluation.plan import load_valid_recipe
from introspection_cli.evaluation.runner import EvalOptions, ProgressCallback
from introspection_cli.recipe.model import Judge
from introspection_cli.recipe.selection import named_judge
from introspection_cli.statistics import Interval, homogeneity_test, wilson_interval
from introspection_cli.workflows.judges_eval import provider_failure

if TYPE_CHECKING:
    from introspection_cli.estimation.ppi import RateEstimate, Stratum
    from introspection_cli.evaluation.batch import BatchEvents
    from introspection_cli.evaluation.outcomes import JudgeRun
    from introspection_cli.fixture.rows import FixtureRow

#: The design check's level: the labelled rows' verdict mix is refused as not random below it.
DESIGN_LEVEL = 0.01
MIN_LABELLED, MIN_SEGMENT_LABELLED = 30, 10
_MIX = ("pass", "fail", "not_applicable", "gated")
_NO_VALUE = "(none)"


@dataclass(frozen=True)
class ScoredRow:
    """One production row: its label (None when unlabelled), the judge's outcome, its segment."""

    label: str | None
    outcome: str
    segment: str


def estimate_random_design(path: Path, options: EvalOptions, rows_file: Path, *, judge_name: str,
                           by_gate: bool, segment: str | None, fmt: str,
                           progress: ProgressCallback | None = None,
                           batch_events: BatchEvents | None = None) -> CommandResult:
    """Run the judge over ``rows_file`` and estimate θ by PPI++ (or refuse, saying why)."""
    recipe, warnings = load_valid_recipe(path, [judge_name])
    judge = named_judge(recipe, judge_name)
    rows, rejected, problems, code = _score_rows(path, judge, rows_file, options, progress,
                                                 batch_events, by_gate=by_gate, key=segment)
    try:
        payload = _estimate(judge, rows_file, rows, rejected, by_gate=by_gate, segment=segment)
    except EstimateRefused as refusal:
        if code == ExitCode.OK:
            raise
        return CommandResult("", (*problems, str(refusal)), code)
    notes = [*warnings, *payload["notes"]]
    from introspection_cli.reporting.registry import ReportKind, check_format, render

    text = render(ReportKind.ESTIMATE_RANDOM, check_format(ReportKind.ESTIMATE_RANDOM, fmt),
                  payload)
    return CommandResult(text, (*problems, *(f"warning: {n}" for n in notes)), code)


def _score_rows(recipe: Path, judge: Judge, rows_file: Path, options: EvalOptions,
                progress: ProgressCallback | None, batch_events: BatchEvents | None, *,
                by_gate: bool,
                key: str | None) -> tuple[list[ScoredRow], int, list[str], ExitCode]:
    from introspection_cli.evaluation.plan import plan_production
    from introspection_cli.evaluation.runner import run_plans

    if not rows_file.is_file():
        raise UsageError(f"--rows {rows_file}: no such file; pass exported fixtures, some "
                         "labelled at random (`introspection judges label`)")
    plan, verified = plan_production(judge, rows_file, provider=options.provider,
                                     model=options.model, regex_timeout=options.regex_timeout)
    result = run_plans(str(recipe), [plan], options, progress=progress,
                       batch_events=batch_events)
    (run,) = result.run.judges
    looked = _record_test_rows(judge, run, verified, options, rows_file)
    rows = []
    for row in run.rows:
        source = verified[row.line]
        if by_gate:
            name = "gate misses" if row.outcome == "gated" else "gate matches"
        else:
            name = _segment_value(source.judge_input, key) if key else "all"
        rows.append(ScoredRow(source.expected, row.outcome, name))
    problems = [f"warning: {warning}" for warning in looked]
    if run.rejected:
        problems.append(f"{len(run.rejected)} row(s) of {rows_file} rejected; they are left out")
    failed, failures = provider_failure(result)
    code = exit_code_for(problems=bool(run.rejected)) if failed is None else failed
    if failed is not None:
        problems += [*failures, "those rows are left out of the estimate"]
    return rows, len(run.rejected), problems, code


def _record_test_rows(judge: Judge, run: JudgeRun, verified: Mapping[int, FixtureRow],
                      options: EvalOptions, rows_file: Path) -> list[str]:
    """Labelled rows of ``rows_file`` that are the judge's test rows (same conversation and
    snapshot) were judged against their labels: a look at test, recorded as eval records
    one. Its warnings, one line each (the first says it happened)."""
    from introspection_cli.certification.certificate import read_split
    from introspection_cli.certification.exposure_file import exposure_path
    from introspection_cli.certification.exposure_record import record_judged_test_rows
    from introspection_cli.evaluation.cache import default_cache_dir

    calibration = judge.calibration_path
    if run.fingerprint is None or not calibration.is_file():
        return []
    held_out = {(row.conversation_id, row.snapshot_hash)
                for row in read_split(calibration, "test").rows}
    seen = [(source.conversation_id, source.snapshot_hash, source.expected, row.outcome)
            for row in run.rows if (source := verified[row.line]).expected is not None
            and (source.conversation_id, source.snapshot_hash) in held_out]
    judged = sum(outcome != "error" for *_, outcome in seen)
    if not judged:
        return []
    recorded = record_judged_test_rows(judge, seen, fingerprint=run.fingerprint,
                                       samples=options.samples,
                                       cache_dir=options.cache_dir or default_cache_dir())
    return [f"judge {judge.name}: {judged} labelled row(s) of {rows_file} are its test rows: "
            "judging them against their labels is a look at its test split, recorded in "
            f"{exposure_path(judge.path.parent, judge.name)}", *recorded]


def _segment_value(judge_input: Mapping[str, Any], key: str) -> str:
    """The value at ``key`` (a dotted path; a number indexes a list) as text."""
    value: Any = judge_input
    for part in key.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return _NO_VALUE
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _estimate(judge: Judge, rows_file: Path, rows: Sequence[ScoredRow], rejected: int, *,
              by_gate: bool, segment: str | None) -> dict[str, Any]:
    from introspection_cli.estimation.ppi import ppi_rate

    labelled = [row for row in rows if row.label is not None]
    unlabelled = [row for row in rows if row.label is None]
    if not labelled:
        raise EstimateRefused(f"no row of {rows_file} is labelled: --design random estimates "
                              "from a random sample of the rows labelled (`introspection "
                              "judges label`); without labels, correct with the calibration "
                              "instead (drop --design)")
    check = _design_check(labelled, unlabelled)
    population = [row for row in rows if row.outcome != "error"
                  and (by_gate or row.outcome != "gated")]
    strata = _strata(population)
    labels = sum(len(stratum.labelled) for stratum, _ in strata.values())
    if labels < MIN_LABELLED:
        raise EstimateRefused(f"only {labels} labelled rows with a verdict to estimate from; "
                              f"PPI's normal interval needs at least {MIN_LABELLED}: label "
                              f"{MIN_LABELLED - labels} more, drawn at random")
    small = [name for name, (stratum, _) in strata.items()
             if len(stratum.labelled) < MIN_SEGMENT_LABELLED]
    if len(strata) > 1 and small:
        raise EstimateRefused(f"segment {small[0]!r} has fewer than {MIN_SEGMENT_LABELLED} "
                              "labelled rows, too few for a stratified estimate: use fewer "
                              "segments (another --segment key) or label more rows")
    overall = _summary(ppi_rate([stratum for stratum, _ in strata.values()]),
                       [row for row in population if row.label is not None])
    if overall["estimate"] is None:
        raise EstimateRefused(overall["reason"])
    segments = _segments(strata) if len(strata) > 1 or by_gate or segment else None
    return {
        "judge": judge.name, "fingerprint": judge_fingerprint(judge), "design": "random",
        "rows": {"path": str(rows_file), "rejected": rejected,
                 "labelled": _outcomes(labelled), "unlabelled": _outcomes(unlabelled)},
        "design_check": check,
        "population": "every conversation (gate matches and misses)" if by_gate
        else "conversations the gate lets through",
        **overall,
        "segments": segments,
        "segment_by": "gate" if by_gate else segment,
        "method": "PPI++ (power-tuned lambda; Angelopoulos et al. 2023), 95% normal interval "
                  "on the log-odds scale" + (", stratified by segment" if segments else ""),
        "notes": [] if unlabelled else [f"every row of {rows_file} is labelled: the "
                                        "estimate is the labels' own"],
    }


def _design_check(labelled: Sequence[ScoredRow],
                  unlabelled: Sequence[ScoredRow]) -> dict[str, Any] | None:
    """Refuse PPI when the labelled rows' verdict mix is not that of a random sample."""
    first = [sum(1 for row in labelled if row.outcome == o) for o in _MIX]
    second = [sum(1 for row in unlabelled if row.outcome == o) for o in _MIX]
    test = homogeneity_test(first, second)
    if test is None:
        return None
    if test.p_value < DESIGN_LEVEL:
        shares = ", ".join(f"{o} {a / sum(first):.0%}/{b / sum(second):.0%}"
                           for o, a, b in zip(_MIX, first, second, strict=True) if a + b)
        raise EstimateRefused(
            "the labelled rows are not a random sample of the others: their verdict mix "
            f"differs beyond chance (labelled/unlabelled: {shares}; chi-square "
            f"{test.statistic:.1f}, df {test.df}, p = {test.p_value:.2g} < {DESIGN_LEVEL}), "
            "as a balanced or hand-picked gold set's does, and PPI would be biased. Correct "
            "with that set as the calibration instead (`judges estimate` without --design, "
            "--report R.json --split S or the certificate), or label a random sample")
    return {"test": "chi-square", "statistic": test.statistic, "df": test.df,
            "p_value": test.p_value, "level": DESIGN_LEVEL}


def _strata(population: Sequence[ScoredRow]) -> dict[str, tuple[Stratum, list[ScoredRow]]]:
    """Each segment's :class:`~introspection_cli.estimation.ppi.Stratum` and its rows."""
    import numpy as np

    from introspection_cli.estimation.ppi import Stratum

    members: dict[str, list[ScoredRow]] = {}
    for row in population:
        members.setdefault(row.segment, []).append(row)
    strata = {}
    for name in sorted(members):
        rows = members[name]
        labelled = np.array([[row.label == "pass", row.label in ("pass", "fail"),
                              row.outcome == "pass", row.outcome in ("pass", "fail")]
                             for row in rows if row.label is not None], dtype=float)
        unlabelled = np.array([[row.outcome == "pass", row.outcome in ("pass", "fail")]
                               for row in rows if row.label is None], dtype=float)
        strata[name] = (Stratum(labelled.reshape(-1, 4), unlabelled.reshape(-1, 2),
                                len(rows) / len(population)), rows)
    return strata


def _segments(strata: Mapping[str, tuple[Stratum, list[ScoredRow]]]) -> list[dict[str, Any]]:
    """Each segment's own estimate: its rows alone, with its own λ."""
    from dataclasses import replace

    from introspection_cli.estimation.ppi import ppi_rate

    return [{"segment": name, "weight": stratum.weight, "rows": len(members),
             "labelled": len(stratum.labelled),
             **_summary(ppi_rate([replace(stratum, weight=1.0)]),
                        [row for row in members if row.label is not None])}
            for name, (stratum, members) in strata.items()]


def _summary(estimate: RateEstimate | None, labelled: Sequence[ScoredRow]) -> dict[str, Any]:
    """The PPI++ interval (or why there is none), the labels-only Wilson, the effective n."""
    passed = sum(1 for row in labelled if row.label == "pass")
    judged = sum(1 for row in labelled if row.label in ("pass", "fail"))
    wilson = wilson_interval(passed, judged)
    summary: dict[str, Any] = {
        "labels_only": None if wilson is None else {**wilson.as_json(), "n": judged},
        "estimate": None, "effective_labels": None, "lambda": None, "reason": None}
    if estimate is None:
        summary["reason"] = "no labelled row is pass or fail: there is no rate to estimate"
        return summary
    bounds = estimate.interval()
    if bounds is None:
        summary["reason"] = (
            f"PPI++ puts the rate at {estimate.value:.3f} with standard error "
            f"{estimate.standard_error:.3f}: at the edge of [0, 1] (or with no spread) it has "
            f"no interval from {judged} labelled rows; read the labels-only Wilson interval"
            + (f" ({wilson.low:.3f}–{wilson.high:.3f})" if wilson else "")
            + ", or label more rows")
        return summary
    summary.update(estimate={**Interval(estimate.value, *bounds).as_json(),
                             "standard_error": estimate.standard_error},
                   effective_labels=len(labelled) * estimate.effective_labels_ratio,
                   **{"lambda": list(estimate.lambdas)})
    return summary


def _outcomes(rows: Sequence[ScoredRow]) -> dict[str, Any]:
    counts = Counter(row.outcome for row in rows)
    return {"rows": len(rows), "outcomes": {o: counts[o] for o in (*_MIX, "error")}}
