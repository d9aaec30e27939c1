"""``judges split``: give labelled rows a split, stratified by label, deterministically.

For each label, the target size of each split is the ratio applied to all rows
of that label; rows that already have a split count toward it and never move.
The rows without one, taken in order of ``sha256(seed ":" conversation_id)``,
each go to the split furthest below its target (ties: test, then dev, then
train). Unlabelled rows keep ``split: null``. Same rows and seed, same result;
a second run changes nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from introspection_cli.errors import UsageError
from introspection_cli.fixture import SPLITS, VERDICTS, FixtureRow
from introspection_cli.fixture.byterule import LineEdit, plan_edit
from introspection_cli.labelling.calibration import CalibrationFile
from introspection_cli.labelling.result import CommandResult
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


Table = dict[str | None, dict[str | None, int]]


def split_label_table(rows: Sequence[FixtureRow],
                      changes: Mapping[int, str] | None = None) -> Table:
    """split (None: no split) -> label (None: unlabelled) -> rows, after ``changes``."""
    table: Table = {split: dict.fromkeys((*VERDICTS, None), 0) for split in TABLE_SPLITS}
    for row in rows:
        split = (changes or {}).get(row.line, row.split)
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


def plan_split(judge: str, calibration: CalibrationFile, ratios: Mapping[str, Fraction],
               seed: int) -> SplitPlan:
    """The edits and resulting table for one judge; nothing is written here."""
    rows = calibration.rows
    changes = assign_splits(rows, ratios, seed)
    edits = []
    for line in sorted(changes):
        edit = plan_edit(line, calibration.line(line).text, {"split": changes[line]})
        if edit is not None:
            edits.append(edit)
    table = split_label_table(rows, changes)
    return SplitPlan(judge, calibration.path, edits, table, too_small_warnings(judge, table))


def too_small_warnings(judge: str, table: Table, bar: float = CERTIFY_BAR) -> list[str]:
    """One warning per split holding fewer pass or fail rows than can ever certify at ``bar``."""
    needed = rows_to_reach(bar) or 0  # a judge agreeing on every row; None only for bar 1
    warnings = []
    for split in SPLITS:
        short = [f"{table[split][label]} {label}" for label in ("pass", "fail")
                 if table[split][label] < needed]
        if short:
            warnings.append(
                f"judge {judge}: split {split} holds {' and '.join(short)} row(s), fewer than "
                f"the {needed} of each needed before a judge can be certified on it (bar "
                f"{bar:.2f}); label more rows of that class and run `judges split` again")
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


def run_split(recipe_path: Path, judge_names: Sequence[str], *, ratios: str, seed: int,
              dry_run: bool) -> CommandResult:
    """``judges split``: plan every selected judge, then write (unless ``dry_run``)."""
    from introspection_cli.labelling.calibration import read_calibration, rejected_summary
    from introspection_cli.labelling.recipe import load_labelling_recipe

    shares = parse_ratios(ratios)
    recipe, notes = load_labelling_recipe(recipe_path, judge_names)
    result = CommandResult(problems=list(notes))
    if not dry_run:  # refuse a file it cannot write before writing any
        from introspection_cli.fixture.target import writable_target

        for judge in recipe:
            writable_target(judge.calibration_path)
    for judge in recipe:
        calibration = read_calibration(judge.calibration_path)
        plan = plan_split(judge.name, calibration, shares, seed)
        if plan.edits and not dry_run:
            from introspection_cli.fixture.byterule import write_edits

            write_edits(calibration.path, plan.edits)
        verb = "would assign" if dry_run else "assigned"
        result.stdout += (f"judge {judge.name}: {verb} a split to {len(plan.edits)} row(s) in "
                          f"{calibration.path}{' (dry run: nothing written)' if dry_run else ''}"
                          f"\n{format_table(plan.table)}\n")
        result.problems += [f"warning: {warning}" for warning in plan.warnings]
        rejected = rejected_summary(calibration)
        if rejected is not None:
            result.problems.append(rejected)
            result.exit_code = 1
    return result
