"""``--baseline FILE``: compare a report with a previous one.

The comparison answers the question a user iterating a rubric has: did my
edit make the judge agree with the labels more, or is the difference noise?
It shows per-split deltas, the rows whose outcome changed, the rows whose
split changed, and, over the rows scored in both runs, McNemar's mid-p test
with a 95% interval for the change in agreement (Newcombe 1998, method 10):
on all paired rows, and apart on the rows labelled ``pass`` (the change in
TPR) and ``fail`` (the change in TNR).

Errors: a baseline path that does not exist or cannot be read is a usage
error (exit 2, like any missing path on the command line); a file that is
not an eval report of version 1, 2 or 3 is a data error (exit 1).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from introspection_cli import strictjson
from introspection_cli.errors import DataError, UsageError
from introspection_cli.evaluation.outcomes import SPLITS
from introspection_cli.reporting.metrics import agrees
from introspection_cli.reporting.model import READABLE_VERSIONS, held_out, load_report_schema
from introspection_cli.statistics import Interval, mcnemar_mid_p, paired_difference

#: The statistics whose change is shown, in display order.
COMPARED_STATISTICS: tuple[str, ...] = ("agreement", "kappa", "tpr", "tnr")

_REMAKE_HINT = "write a new one with `introspection judges eval --output FILE`"


@dataclass(frozen=True, slots=True)
class StatDelta:
    """One statistic before (baseline) and after (this run); ``delta`` is None if either is null."""

    statistic: str
    before: float | None
    after: float | None

    @property
    def delta(self) -> float | None:
        if self.before is None or self.after is None:
            return None
        return self.after - self.before


@dataclass(frozen=True, slots=True)
class SplitDelta:
    split: str
    n_before: int
    n_after: int
    statistics: tuple[StatDelta, ...]
    #: Where the split was held out (not evaluated): "in the baseline", "in this run",
    #: "in both runs", or None when it was evaluated in both.
    held_out: str | None = None


@dataclass(frozen=True, slots=True)
class ChangedRow:
    """A conversation in both reports whose outcome (or label) differs."""

    line: int  # in this run's calibration file
    conversation_id: str
    expected: str
    expected_before: str
    before: str
    after: str

    @property
    def relabelled(self) -> bool:
        return self.expected != self.expected_before


@dataclass(frozen=True, slots=True)
class SplitChange:
    """A conversation in both reports whose split differs."""

    line: int
    conversation_id: str
    before: str | None
    after: str | None


@dataclass(frozen=True, slots=True)
class McNemar:
    """McNemar's mid-p test over paired rows: those scored in both runs with the same label.

    ``improved`` rows disagreed with the label in the baseline and agree now;
    ``regressed`` the reverse. Rows right (or wrong) in both runs carry no
    information about the change but count in ``paired`` and in ``difference``,
    the change in agreement (this run − baseline) with its 95% interval (None
    without pairs). ``scope`` is ``all``, ``pass`` (ΔTPR) or ``fail`` (ΔTNR).
    """

    scope: str
    paired: int
    improved: int
    regressed: int
    p_value: float
    difference: Interval | None


@dataclass(frozen=True, slots=True)
class JudgeComparison:
    name: str
    model_before: str  # "provider/model"
    model_after: str
    splits: tuple[SplitDelta, ...]
    changed: tuple[ChangedRow, ...]
    #: Over all paired rows, then those labelled pass (ΔTPR) and fail (ΔTNR).
    tests: tuple[McNemar, ...]
    split_changes: tuple[SplitChange, ...]
    only_in_baseline: int  # conversations the baseline scored and this run does not have
    only_in_current: int

    @property
    def mcnemar(self) -> McNemar:
        """The test over all paired rows."""
        return self.tests[0]


@dataclass(frozen=True, slots=True)
class Comparison:
    """This run against a baseline report, judge by judge (matched by name)."""

    judges: tuple[JudgeComparison, ...]
    judges_only_in_baseline: tuple[str, ...]
    judges_only_in_current: tuple[str, ...]


def load_baseline(path: Path) -> dict[str, Any]:
    """Read and validate a previous JSON report for ``--baseline``."""
    return load_report_file(path, what="baseline")


def load_report_file(path: Path, *, what: str) -> dict[str, Any]:
    """Read and validate a JSON eval report named on the command line as ``what``.

    Raises :class:`UsageError` when the file is missing or unreadable and
    :class:`DataError` when it is not a valid eval report of a version this
    introspection reads (1 to 3).
    """
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError as exc:
        raise UsageError(f"{what} {path} does not exist; pass a JSON report "
                         f"written by `introspection judges eval --output FILE`") from exc
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror or exc}") from exc
    try:
        report = strictjson.loads(data)
    except UnicodeDecodeError as exc:
        raise DataError(f"{what} {path} is not UTF-8 text, so not a JSON report; "
                        f"{_REMAKE_HINT}") from exc
    except (ValueError, RecursionError) as exc:  # invalid JSON, a duplicate key, NaN/Infinity
        raise DataError(f"{what} {path} is not valid JSON ({exc}); {_REMAKE_HINT}") from exc
    _check_report_shape(path, report, what)
    return report  # type: ignore[no-any-return]


def _check_report_shape(path: Path, report: Any, what: str) -> None:
    if not isinstance(report, dict) or "report_version" not in report:
        raise DataError(f"{what} {path} is not an eval report (no report_version); "
                        f"{_REMAKE_HINT}")
    version = report["report_version"]
    if isinstance(version, bool) or version not in READABLE_VERSIONS:
        *earlier, last = (str(v) for v in READABLE_VERSIONS)
        readable = f"{', '.join(earlier)} and {last}" if earlier else last
        raise DataError(f"{what} {path} has report_version {json.dumps(version)}; this "
                        f"introspection reads versions {readable}; {_REMAKE_HINT}")
    import jsonschema  # lazily: only --baseline needs it

    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(load_report_schema(version)).iter_errors(report))
    if error is not None:
        where = error.json_path
        raise DataError(f"{what} {path} is not a valid eval report: at {where}: "
                        f"{error.message}; {_REMAKE_HINT}")


def compare_with_baseline(report: Mapping[str, Any], baseline: Mapping[str, Any]) -> Comparison:
    """Compare ``report`` (this run) with ``baseline``; judges are matched by name."""
    before = {judge["name"]: judge for judge in baseline["judges"]}
    after = {judge["name"]: judge for judge in report["judges"]}
    return Comparison(
        judges=tuple(_compare_judge(before[name], judge)
                     for name, judge in after.items() if name in before),
        judges_only_in_baseline=tuple(name for name in before if name not in after),
        judges_only_in_current=tuple(name for name in after if name not in before),
    )


def _compare_judge(before: Mapping[str, Any], after: Mapping[str, Any]) -> JudgeComparison:
    rows_before = {row["conversation_id"]: row for row in before["rows"]}
    rows_after = {row["conversation_id"]: row for row in after["rows"]}
    common = [cid for cid in rows_after if cid in rows_before]
    changed = [
        ChangedRow(line=rows_after[cid]["line"], conversation_id=cid,
                   expected=rows_after[cid]["expected"],
                   expected_before=rows_before[cid]["expected"],
                   before=rows_before[cid]["outcome"], after=rows_after[cid]["outcome"])
        for cid in common
        if (rows_before[cid]["outcome"], rows_before[cid]["expected"])
        != (rows_after[cid]["outcome"], rows_after[cid]["expected"])
    ]
    moved = [SplitChange(rows_after[cid]["line"], cid, rows_before[cid]["split"],
                         rows_after[cid]["split"])
             for cid in common if rows_before[cid]["split"] != rows_after[cid]["split"]]
    pairs = [(rows_before[cid], rows_after[cid]) for cid in common]
    return JudgeComparison(
        name=after["name"],
        model_before=f"{before['provider']}/{before['model']}",
        model_after=f"{after['provider']}/{after['model']}",
        splits=tuple(_split_delta(split, before["splits"][split], after["splits"][split])
                     for split in SPLITS),
        changed=tuple(sorted(changed, key=lambda row: row.line)),
        tests=tuple(paired_test(scope, pairs) for scope in ("all", "pass", "fail")),
        split_changes=tuple(sorted(moved, key=lambda row: row.line)),
        only_in_baseline=sum(cid not in rows_after for cid in rows_before),
        only_in_current=len(rows_after) - len(common),
    )


def _split_delta(split: str, before: Mapping[str, Any], after: Mapping[str, Any]) -> SplitDelta:
    return SplitDelta(
        split=split, n_before=before["n"], n_after=after["n"],
        statistics=tuple(StatDelta(name, _point(before.get(name)), _point(after.get(name)))
                         for name in COMPARED_STATISTICS),
        held_out=_held_out_where(held_out(before), held_out(after)),
    )


def _held_out_where(before: bool, after: bool) -> str | None:
    if before and after:
        return "in both runs"
    if before or after:
        return "in the baseline" if before else "in this run"
    return None


def _point(statistic: Any) -> float | None:
    """The point value of a report statistic: an interval's ``value``, kappa itself, or None."""
    if isinstance(statistic, Mapping):
        return float(statistic["value"])
    return None if statistic is None else float(statistic)


def paired_test(scope: str, pairs: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]
                ) -> McNemar:
    """McNemar's mid-p test and the paired difference over ``pairs`` of report rows
    (the same conversation before and after, or with the first model and another)."""
    # Only rows that are the same question both times pair up: an error in
    # either run has no verdict to compare, and a relabelled row is scored
    # against a different answer.
    scored = [(before, after) for before, after in pairs
              if "error" not in (before["outcome"], after["outcome"])
              and before["expected"] == after["expected"]
              and scope in ("all", after["expected"])]
    both = improved = regressed = 0
    for before, after in scored:
        was_right = agrees(before["expected"], before["outcome"])
        is_right = agrees(after["expected"], after["outcome"])
        both += was_right and is_right
        improved += is_right and not was_right
        regressed += was_right and not is_right
    neither = len(scored) - both - improved - regressed
    return McNemar(scope=scope, paired=len(scored), improved=improved, regressed=regressed,
                   p_value=mcnemar_mid_p(regressed, improved),
                   difference=paired_difference(both, improved, regressed, neither))
