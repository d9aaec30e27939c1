"""``--baseline FILE``: compare a report with a previous one.

The comparison answers the question a user iterating a rubric has: did my
edit make the judge agree with the labels more, or is the difference noise?
Only rows present in both reports are compared: paired by conversation id and
snapshot hash (a conversation whose text changed is another question, and a
row added or dropped is not a change of the judge). Per split it shows the
change of each statistic over the paired rows of that split, and how many rows
are not paired; then the rows whose outcome changed, the rows whose split
changed, the rows not paired, and McNemar's mid-p test with a 95% interval for
the change in agreement (Newcombe 1998, method 10): on all paired rows, and
apart on the rows labelled ``pass`` (the change in TPR) and ``fail`` (the change
in TNR). Those three tests are one family: their p-values are Holm-adjusted.

Errors: a baseline path that does not exist or cannot be read is a usage
error (exit 2, like any missing path on the command line); a file that is
not an eval report of version 1, 2 or 3 is a data error (exit 1).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from introspection_cli import strictjson
from introspection_cli.errors import DataError, UsageError
from introspection_cli.evaluation.outcomes import RowOutcome
from introspection_cli.reporting.metrics import (
    REPORT_SPLITS,
    SCORED,
    agrees,
    split_key,
    split_stats,
)
from introspection_cli.reporting.model import READABLE_VERSIONS, load_report_schema
from introspection_cli.reporting.report import (
    EvalReport,
    HeldOut,
    JSONObject,
    JudgeEntry,
    ReportRow,
    Splits,
    as_report,
)
from introspection_cli.statistics import Interval, holm_adjusted, mcnemar_mid_p, paired_difference

#: The statistics whose change is shown, in display order.
COMPARED_STATISTICS: tuple[str, ...] = ("agreement", "na_agreement", "kappa", "tpr", "tnr")

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
    """The change of each statistic on one split, over the rows paired in it.

    ``paired`` rows are in this split in both reports; ``only_in_baseline`` and
    ``only_in_current`` count the split's rows in one report that have no pair in
    the split in the other (added, dropped, text changed or moved), which no
    statistic here includes.
    """

    split: str
    paired: int
    only_in_baseline: int
    only_in_current: int
    statistics: tuple[StatDelta, ...]
    #: Where the split was held out (not evaluated): "in the baseline", "in this run",
    #: "in both runs", or None when it was evaluated in both.
    held_out: str | None = None

    @property
    def unpaired(self) -> int:
        return self.only_in_baseline + self.only_in_current


@dataclass(frozen=True, slots=True)
class ChangedRow:
    """A paired row whose outcome (or label) differs."""

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
    """A paired row whose split differs."""

    line: int
    conversation_id: str
    before: str | None
    after: str | None


@dataclass(frozen=True, slots=True)
class UnpairedRow:
    """A row of one report without a pair in the other, left out of every delta and test.

    ``where`` is ``baseline`` (only there; ``line`` is the baseline's), ``this run``
    (only here) or ``text changed`` (in both, but its snapshot_hash differs: another
    conversation text under the same id; ``line`` is this run's).
    """

    line: int
    conversation_id: str
    where: str


@dataclass(frozen=True, slots=True)
class McNemar:
    """McNemar's mid-p test over paired rows: those scored in both runs with the same label.

    ``improved`` rows disagreed with the label in the baseline and agree now;
    ``regressed`` the reverse. Rows right (or wrong) in both runs carry no
    information about the change but count in ``paired`` and in ``difference``,
    the change in agreement (this run − baseline) with its 95% interval (None
    without pairs). ``scope`` is ``all``, ``pass`` (ΔTPR) or ``fail`` (ΔTNR).
    ``p_adjusted`` is the p-value Holm-adjusted over the family of tests it was run
    in (the baseline's three); None when it was run alone.
    """

    scope: str
    paired: int
    improved: int
    regressed: int
    p_value: float
    difference: Interval | None
    p_adjusted: float | None = None


@dataclass(frozen=True, slots=True)
class JudgeComparison:
    name: str
    model_before: str  # "provider/model"
    model_after: str
    splits: tuple[SplitDelta, ...]
    changed: tuple[ChangedRow, ...]
    #: Over all paired rows, then those labelled pass (ΔTPR) and fail (ΔTNR), Holm-adjusted.
    tests: tuple[McNemar, ...]
    split_changes: tuple[SplitChange, ...]
    #: Rows without a pair, in line order: only in the baseline, only here, text changed.
    unpaired: tuple[UnpairedRow, ...] = ()

    @property
    def mcnemar(self) -> McNemar:
        """The test over all paired rows."""
        return self.tests[0]

    @property
    def only_in_baseline(self) -> int:
        """Conversations the baseline has and this run does not."""
        return sum(row.where == "baseline" for row in self.unpaired)

    @property
    def only_in_current(self) -> int:
        return sum(row.where == "this run" for row in self.unpaired)

    @property
    def text_changed(self) -> int:
        return sum(row.where == "text changed" for row in self.unpaired)


@dataclass(frozen=True, slots=True)
class Comparison:
    """This run against a baseline report, judge by judge (matched by name)."""

    judges: tuple[JudgeComparison, ...]
    judges_only_in_baseline: tuple[str, ...]
    judges_only_in_current: tuple[str, ...]


def load_baseline(path: Path) -> EvalReport:
    """Read and validate a previous JSON report for ``--baseline``."""
    return load_report(path, what="baseline")


def load_report(path: Path, *, what: str) -> EvalReport:
    """A JSON eval report named on the command line as ``what``, as its value: what
    :func:`load_report_file` refuses, and a :class:`DataError` for what its schema cannot
    check (an interval's low <= value <= high)."""
    data = load_report_file(path, what=what)
    try:
        return EvalReport.from_json(data)
    except ValueError as exc:
        raise DataError(f"{what} {path} is not a valid eval report: {exc}; "
                        f"{_REMAKE_HINT}") from exc


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


def compare_with_baseline(report: EvalReport | JSONObject,
                          baseline: EvalReport | JSONObject) -> Comparison:
    """Compare ``report`` (this run) with ``baseline``; judges are matched by name."""
    before = {judge.name: judge for judge in as_report(baseline).judges}
    after = {judge.name: judge for judge in as_report(report).judges}
    return Comparison(
        judges=tuple(_compare_judge(before[name], judge)
                     for name, judge in after.items() if name in before),
        judges_only_in_baseline=tuple(name for name in before if name not in after),
        judges_only_in_current=tuple(name for name in after if name not in before),
    )


def pair_rows(rows_before: Sequence[ReportRow], rows_after: Sequence[ReportRow]
              ) -> tuple[list[tuple[ReportRow, ReportRow]], list[UnpairedRow]]:
    """The rows of two reports paired by conversation id and snapshot hash, and those
    without a pair. A row missing its hash (a version-1 report) pairs by id alone."""
    by_id = {row.conversation_id: row for row in rows_before}
    pairs: list[tuple[ReportRow, ReportRow]] = []
    unpaired: list[UnpairedRow] = []
    for row in rows_after:
        old = by_id.get(row.conversation_id)
        if old is None:
            unpaired.append(UnpairedRow(row.line, row.conversation_id, "this run"))
        elif None not in (old.snapshot_hash, row.snapshot_hash) \
                and old.snapshot_hash != row.snapshot_hash:
            unpaired.append(UnpairedRow(row.line, row.conversation_id, "text changed"))
        else:
            pairs.append((old, row))
    current = {row.conversation_id for row in rows_after}
    unpaired += [UnpairedRow(row.line, row.conversation_id, "baseline")
                 for row in rows_before if row.conversation_id not in current]
    return pairs, sorted(unpaired, key=lambda row: (row.where == "baseline", row.line))


def _compare_judge(before: JudgeEntry, after: JudgeEntry) -> JudgeComparison:
    pairs, unpaired = pair_rows(before.rows, after.rows)
    changed = [
        ChangedRow(line=now.line, conversation_id=now.conversation_id,
                   expected=now.expected, expected_before=old.expected,
                   before=old.outcome, after=now.outcome)
        for old, now in pairs
        if (old.outcome, old.expected) != (now.outcome, now.expected)
    ]
    moved = [SplitChange(now.line, now.conversation_id, old.split, now.split)
             for old, now in pairs if old.split != now.split]
    return JudgeComparison(
        name=after.name,
        model_before=f"{before.provider}/{before.model}",
        model_after=f"{after.provider}/{after.model}",
        splits=_split_deltas(before, after, pairs),
        changed=tuple(sorted(changed, key=lambda row: row.line)),
        tests=holm_family([paired_test(scope, pairs) for scope in ("all", "pass", "fail")]),
        split_changes=tuple(sorted(moved, key=lambda row: row.line)),
        unpaired=tuple(unpaired),
    )


def holm_family(tests: Sequence[McNemar]) -> tuple[McNemar, ...]:
    """``tests`` with their p-values Holm-adjusted as one family."""
    adjusted = holm_adjusted([test.p_value for test in tests])
    return tuple(replace(test, p_adjusted=p) for test, p in zip(tests, adjusted, strict=True))


def _split_deltas(before: JudgeEntry, after: JudgeEntry,
                  pairs: Sequence[tuple[ReportRow, ReportRow]]) -> tuple[SplitDelta, ...]:
    """Per report split, the statistics over the rows paired in it (in it in both
    reports), recomputed from the rows: so both sides count alike even when the
    baseline is a report version whose statistics counted otherwise."""
    paired = list(pairs)
    counts = {side: [split_key(row) for row in judge.rows]
              for side, judge in (("before", before), ("after", after))}
    return tuple(_split_delta(split, paired, counts, before.splits, after.splits)
                 for split in REPORT_SPLITS)


def _split_delta(split: str, paired: Sequence[tuple[RowOutcome, RowOutcome]],
                 counts: Mapping[str, Sequence[str]], splits_before: Splits,
                 splits_after: Splits) -> SplitDelta:
    inside = [(old, now) for old, now in paired
              if split == SCORED or split_key(old) == split_key(now) == split]
    stats_before = split_stats([old for old, _ in inside])
    stats_after = split_stats([now for _, now in inside])

    def rows_in(side: str) -> int:
        return len(counts[side]) if split == SCORED else counts[side].count(split)

    return SplitDelta(
        split=split, paired=len(inside),
        only_in_baseline=rows_in("before") - len(inside),
        only_in_current=rows_in("after") - len(inside),
        statistics=tuple(StatDelta(name, _point(getattr(stats_before, name)),
                                   _point(getattr(stats_after, name)))
                         for name in COMPARED_STATISTICS),
        held_out=_held_out_where(isinstance(splits_before.get(split), HeldOut),
                                 isinstance(splits_after.get(split), HeldOut)),
    )


def _held_out_where(before: bool, after: bool) -> str | None:
    if before and after:
        return "in both runs"
    if before or after:
        return "in the baseline" if before else "in this run"
    return None


def _point(statistic: Interval | float | None) -> float | None:
    """The point value of a statistic: an interval's ``value``, kappa itself, or None."""
    if isinstance(statistic, Interval):
        return statistic.value
    return None if statistic is None else float(statistic)


def paired_test(scope: str, pairs: Sequence[tuple[ReportRow, ReportRow]]) -> McNemar:
    """McNemar's mid-p test and the paired difference over ``pairs`` of report rows
    (the same conversation before and after, or with the first model and another)."""
    # Only rows that are the same question both times pair up: an error in
    # either run has no verdict to compare, and a relabelled row is scored
    # against a different answer.
    scored = [(before, after) for before, after in pairs
              if "error" not in (before.outcome, after.outcome)
              and before.expected == after.expected
              and scope in ("all", after.expected)]
    both = improved = regressed = 0
    for before, after in scored:
        was_right = agrees(before.expected, before.outcome)
        is_right = agrees(after.expected, after.outcome)
        both += was_right and is_right
        improved += is_right and not was_right
        regressed += was_right and not is_right
    neither = len(scored) - both - improved - regressed
    return McNemar(scope=scope, paired=len(scored), improved=improved, regressed=regressed,
                   p_value=mcnemar_mid_p(regressed, improved),
                   difference=paired_difference(both, improved, regressed, neither))
