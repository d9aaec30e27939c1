"""``judges split``: give labelled rows a split, stratified by label, deterministically.

Splits are frozen: a row that has a split keeps it, so test rows stay held out
and a rerun changes nothing. For each label, the target size of each split is
the ratio applied to all rows of that label; rows that already have a split
count toward it. The rows without one, taken in order of ``sha256(seed ":"
conversation_id)``, each go to the split furthest below its target (ties:
test, then dev, then train). Unlabelled rows keep ``split: null``.

``--fill-test`` first sends rows without a split to ``test``, in the same
order, until the test split holds the rows of each class its plan asks for
(the plan's targets are computed by the caller: see
:mod:`introspection_cli.workflows.judge_plan`); the rest go by the ratios.
``--reset`` clears the split of every row never seen in test (per the judge's
exposure file); a row seen in test keeps its split, and the reset says which.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path

from introspection_cli.errors import UsageError
from introspection_cli.fixture import SPLITS, VERDICTS, FixtureRow
from introspection_cli.fixture.byterule import LineEdit, plan_edit
from introspection_cli.labelling.calibration import CalibrationFile
from introspection_cli.labelling.result import CommandResult
from introspection_cli.recipe.model import Judge
from introspection_cli.statistics import rows_to_reach

DEFAULT_RATIOS = "20:40:40"
#: The certification bar the too-small warning is about (``judges certify``'s default).
CERTIFY_BAR = 0.80
#: Ties between equally short splits go to the first of these.
_TIE_ORDER = ("test", "dev", "train")
#: Table rows: the three splits, then rows without one.
TABLE_SPLITS: tuple[str | None, ...] = (*SPLITS, None)


def parse_ratios(text: str) -> dict[str, Fraction]:
    """``"20:40:40"`` as train/dev/test shares summing to 1; :class:`UsageError` otherwise."""
    parts = text.split(":")
    try:
        weights = [Fraction(part.strip()) for part in parts]
    except (ValueError, ZeroDivisionError):
        weights = []
    if len(parts) != 3 or len(weights) != 3 or any(w < 0 for w in weights) or sum(weights) == 0:
        raise UsageError(f"--ratios {text!r}: give three non-negative numbers "
                         f"train:dev:test, not all zero (default {DEFAULT_RATIOS})")
    total = sum(weights)
    return {split: weight / total for split, weight in zip(SPLITS, weights, strict=True)}


def order_key(seed: int, conversation_id: str) -> str:
    """The position of a row in the assignment order: ``sha256(seed ":" conversation_id)``."""
    return hashlib.sha256(f"{seed}:{conversation_id}".encode()).hexdigest()


def assign_splits(rows: Sequence[FixtureRow], ratios: Mapping[str, Fraction],
                  seed: int) -> dict[int, str]:
    """line -> new split for every labelled row without one (the module docstring's rule)."""
    assigned: dict[int, str] = {}
    for label in VERDICTS:
        of_label = [row for row in rows if row.expected == label]
        counts = {split: sum(row.split == split for row in of_label) for split in SPLITS}
        targets = {split: ratios[split] * len(of_label) for split in SPLITS}
        waiting = sorted((row for row in of_label if row.split is None),
                         key=lambda row: order_key(seed, row.conversation_id))
        for row in waiting:
            # furthest below target; ties by _TIE_ORDER (max keeps the first maximum)
            split = max(_TIE_ORDER, key=lambda s: targets[s] - counts[s])
            counts[split] += 1
            assigned[row.line] = split
    return assigned


def fill_test(rows: Sequence[FixtureRow], targets: Mapping[str, int | None], ratios:
              Mapping[str, Fraction], seed: int) -> dict[int, str]:
    """line -> new split: rows without one go to test, in the assignment order, until test
    holds ``targets[label]`` rows of each label (None: no target, the plan is out of
    reach); every other row without a split by the ratios (:func:`assign_splits`)."""
    to_test: dict[int, str] = {}
    for label, wanted in targets.items():
        of_label = [row for row in rows if row.expected == label]
        held = sum(row.split == "test" for row in of_label)
        waiting = sorted((row for row in of_label if row.split is None),
                         key=lambda row: order_key(seed, row.conversation_id))
        to_test.update((row.line, "test") for row in waiting[:max(0, (wanted or 0) - held)])
    rest = [replace(row, split=to_test[row.line]) if row.line in to_test else row
            for row in rows]
    return {**to_test, **assign_splits(rest, ratios, seed)}


Table = dict[str | None, dict[str | None, int]]


def split_label_table(rows: Sequence[FixtureRow],
                      changes: Mapping[int, str | None] | None = None) -> Table:
    """split (None: no split) -> label (None: unlabelled) -> rows, after ``changes``."""
    table: Table = {split: dict.fromkeys((*VERDICTS, None), 0) for split in TABLE_SPLITS}
    for row in rows:
        split = (changes or {}).get(row.line, row.split)  # None: cleared (--reset)
        table[split][row.expected] += 1
    return table


@dataclass
class SplitPlan:
    """What ``judges split`` does to one judge's file."""

    judge: str
    path: Path
    edits: list[LineEdit]
    table: Table
    warnings: list[str] = field(default_factory=list)
    #: What the command says about this judge besides the table, one line each.
    notes: list[str] = field(default_factory=list)
    #: Problems that make the command exit 1 (rows seen in test that --reset keeps).
    problems: list[str] = field(default_factory=list)


#: label -> the test rows the judge's plan asks for (``--fill-test``); None: out of reach.
TestTargets = Callable[[Judge], Mapping[str, "int | None"]]


def plan_split(judge: str, calibration: CalibrationFile, ratios: Mapping[str, Fraction],
               seed: int, targets: Mapping[str, int | None] | None = None) -> SplitPlan:
    """The edits and resulting table for one judge; nothing is written here. With
    ``targets``, test is filled to them first (:func:`fill_test`)."""
    rows = calibration.rows
    changes = assign_splits(rows, ratios, seed) if targets is None else \
        fill_test(rows, targets, ratios, seed)
    plan = _planned(judge, calibration, changes)
    plan.warnings = too_small_warnings(judge, plan.table, dev_expected=ratios["dev"] > 0)
    plan.notes = _frozen_note(rows, changes)
    if targets is not None:
        plan.notes.insert(0, _fill_note(plan.table, targets))
    return plan


def _planned(judge: str, calibration: CalibrationFile, changes: Mapping[int, str | None]
             ) -> SplitPlan:
    edits = []
    for line in sorted(changes):
        edit = plan_edit(line, calibration.line(line).text, {"split": changes[line]})
        if edit is not None:
            edits.append(edit)
    return SplitPlan(judge, calibration.path, edits,
                     split_label_table(calibration.rows, changes))


def _frozen_note(rows: Sequence[FixtureRow], changes: Mapping[int, str]) -> list[str]:
    """Why rows that have a split got none of the ratios (the 0 of "assigned 0 rows")."""
    kept = sum(row.expected is not None and row.split is not None for row in rows)
    if not kept:
        return []
    waiting = sum(row.expected is not None and row.split is None for row in rows)
    return [f"{kept} labelled row(s) already have a split and keep it; "
            f"{waiting} had none" + ("" if changes else
                                     " (`judges split --reset` clears the splits of rows "
                                     "never seen in test)")]


def _fill_note(table: Table, targets: Mapping[str, int | None]) -> str:
    parts = []
    for label, wanted in targets.items():
        held = table["test"][label]
        if wanted is None:
            parts.append(f"{label}: out of reach at the planned rate, no target (by the "
                         "ratios)")
        elif held < wanted:
            parts.append(f"{label}: {held} of the {wanted} planned, {wanted - held} more to "
                         "label")
        else:
            parts.append(f"{label}: {held}, the plan's {wanted} met")
    return "--fill-test: test rows after it, against the plan (`judges plan`): " + \
        "; ".join(parts)


def plan_reset(judge: Judge, calibration: CalibrationFile) -> SplitPlan:
    """``--reset``: clear the split of every row never seen in test; a row seen in test
    keeps its split and is named."""
    from introspection_cli.certification.exposure_file import exposure_path, read_looks

    looks = read_looks(exposure_path(judge.path.parent, judge.name))
    seen = {row.conversation_id for look in looks for row in look.rows}
    with_split = [row for row in calibration.rows if row.split is not None]
    kept = [row for row in with_split if row.conversation_id in seen]
    plan = _planned(judge.name, calibration,
                    {row.line: None for row in with_split if row not in kept})
    plan.notes.append(f"--reset: {len(plan.edits)} row(s) never seen in test lose their split; "
                      "`judges split` assigns them again")
    if kept:
        shown = ", ".join(f"{row.conversation_id} ({row.split}, line {row.line})"
                          for row in kept[:10]) + (", ..." if len(kept) > 10 else "")
        plan.problems.append(
            f"judge {judge.name}: {len(kept)} row(s) seen in test keep their split: {shown}. "
            "A row a judge was evaluated on in test is never moved (its figures would be "
            "optimistic elsewhere); label fresh rows instead")
    return plan


def too_small_warnings(judge: str, table: Table, bar: float = CERTIFY_BAR, *,
                       dev_expected: bool = True) -> list[str]:
    """A warning when ``test`` holds fewer pass or fail rows than can ever certify at
    ``bar``, and when ``dev`` holds no labelled row at all (when the ratios give it any);
    train and a small dev are a choice, not a problem."""
    needed = rows_to_reach(bar) or 0  # a judge agreeing on every row; None only for bar 1
    warnings = []
    short = [f"{table['test'][label]} {label}" for label in ("pass", "fail")
             if table["test"][label] < needed]
    labelled = sum(table[split][label] for split in TABLE_SPLITS for label in VERDICTS)
    if short and labelled:
        warnings.append(
            f"judge {judge}: split test holds {' and '.join(short)} row(s), fewer than the "
            f"{needed} of each needed before a judge can be certified on it (bar {bar:.2f}); "
            "label more rows of that class (`judges plan` says how many give a likely "
            "certificate) and run `judges split` again")
    if dev_expected and labelled and not any(table["dev"][label] for label in VERDICTS):
        warnings.append(f"judge {judge}: split dev is empty: there are no rows to tune the "
                        "rubric on, and plans assume a rate of 0.9 until `judges eval` "
                        "measures one on dev")
    return warnings


def format_table(table: Table) -> str:
    """The split x label table as aligned text (one line per split, then totals)."""
    headers = ["split", *VERDICTS, "unlabelled", "total"]
    body: list[list[str]] = []
    for split in TABLE_SPLITS:
        counts = [table[split][label] for label in (*VERDICTS, None)]
        body.append([split or "none", *(str(c) for c in counts), str(sum(counts))])
    totals = [sum(table[split][label] for split in TABLE_SPLITS) for label in (*VERDICTS, None)]
    body.append(["total", *(str(c) for c in totals), str(sum(totals))])
    widths = [max(len(row[i]) for row in [headers, *body]) for i in range(len(headers))]
    lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w)
                       for i, (cell, w) in enumerate(zip(row, widths, strict=True)))
             for row in [headers, *body]]
    return "\n".join(lines) + "\n"


def frozen_notice(ratios: str, *, reset: bool) -> str:
    """What ``judges split`` says before anything else: splits are frozen."""
    if reset:
        return ("judges split --reset: the split of every row never seen in test is cleared; "
                "a row seen in test keeps its split.\n")
    return (f"judges split: splits are frozen (a row that has a split keeps it, so test rows "
            f"stay held out); --ratios {ratios} apply only to labelled rows without a "
            "split.\n")


def run_split(recipe_path: Path, judge_names: Sequence[str], *, ratios: str, seed: int,
              dry_run: bool, reset: bool = False,
              test_targets: TestTargets | None = None) -> CommandResult:
    """``judges split``: plan every selected judge, then write (unless ``dry_run``).
    ``reset``: clear the splits of rows never seen in test instead; ``test_targets``:
    ``--fill-test``, with the test rows each judge's plan asks for."""
    from introspection_cli.labelling.calibration import read_calibration
    from introspection_cli.labelling.recipe import load_labelling_recipe

    shares = parse_ratios(ratios)
    recipe, notes = load_labelling_recipe(recipe_path, judge_names)
    result = CommandResult(stdout=frozen_notice(ratios, reset=reset), problems=list(notes))
    if not dry_run:  # refuse a file it cannot write before writing any
        from introspection_cli.fixture.target import writable_target

        for judge in recipe:
            writable_target(judge.calibration_path)
    for judge in recipe:
        calibration = read_calibration(judge.calibration_path)
        if reset:
            plan = plan_reset(judge, calibration)
        else:
            targets = None if test_targets is None else test_targets(judge)
            plan = plan_split(judge.name, calibration, shares, seed, targets)
        _report(result, plan, calibration, dry_run=dry_run, reset=reset)
    return result


def _report(result: CommandResult, plan: SplitPlan, calibration: CalibrationFile, *,
            dry_run: bool, reset: bool) -> None:
    """Write ``plan`` (unless ``dry_run``) and add what it did to ``result``."""
    from introspection_cli.labelling.calibration import rejected_summary

    if plan.edits and not dry_run:
        from introspection_cli.fixture.byterule import write_edits

        write_edits(calibration.path, plan.edits)
    verb = ("would clear" if dry_run else "cleared") if reset else \
        ("would assign" if dry_run else "assigned")
    what = "the split of" if reset else "a split to"
    result.stdout += (f"judge {plan.judge}: {verb} {what} {len(plan.edits)} row(s) in "
                      f"{calibration.path}{' (dry run: nothing written)' if dry_run else ''}"
                      "\n" + "".join(f"  {note}\n" for note in plan.notes)
                      + f"{format_table(plan.table)}\n")
    result.problems += [f"warning: {warning}" for warning in plan.warnings]
    result.problems += plan.problems
    rejected = rejected_summary(calibration)
    if rejected is not None:
        result.problems.append(rejected)
    if rejected is not None or plan.problems:
        result.exit_code = 1
