"""What an align run reads before any call: the calibration rows, split by what each may do.

Train rows are shown to the optimizer (their events are kept by line); every
other row (``dev``, ``test``, no split) is guarded against quotes
(:mod:`.leakage`). Unlabelled rows are counted and left out, as ``judges
eval`` leaves them out; any other rejected row stops the run (exit 1) before
any call, since the figures would be over a file that is being changed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from introspection_cli.alignment.leakage import GuardedRow, guarded_row
from introspection_cli.errors import DataError
from introspection_cli.fixture import verify_calibration_file
from introspection_cli.fixture.codes import BLANK_LINE, UNLABELLED


@dataclass(frozen=True)
class CalibrationRows:
    """The rows of one calibration file as an align run uses them."""

    #: Labelled rows per split name (``train``, ``dev``, ``test``, ``unsplit``).
    labelled: Mapping[str, int]
    unlabelled: int
    train_events: Mapping[int, Sequence[object]]
    guarded: tuple[GuardedRow, ...]


def read_rows(path: Path) -> CalibrationRows:
    """Read and verify ``path``; :class:`DataError` naming the lines of any rejected row."""
    labelled = dict.fromkeys(("train", "dev", "test", "unsplit"), 0)
    unlabelled = 0
    train_events: dict[int, Sequence[object]] = {}
    guarded: list[GuardedRow] = []
    rejected: list[str] = []
    for result in verify_calibration_file(path):
        codes = [r for r in result.rejections if r.code not in (BLANK_LINE, UNLABELLED)]
        if codes:
            rejected += [f"line {r.line}: {r.code}" for r in codes]
            continue
        row = result.row
        if row is None:
            continue
        if row.split != "train":
            guarded.append(guarded_row(row.line, row.conversation_id, row.split,
                                       row.judge_input))
        if row.expected is None:
            unlabelled += 1
            continue
        labelled[row.split or "unsplit"] += 1
        if row.split == "train":
            events = row.judge_input.get("events")
            train_events[row.line] = events if isinstance(events, list) else []
    if rejected:
        shown = "; ".join(rejected[:10]) + ("; ..." if len(rejected) > 10 else "")
        raise DataError(f"{path}: {len(rejected)} calibration row problem(s) ({shown}); fix "
                        "them (`introspection check`) before aligning the judge")
    return CalibrationRows(labelled, unlabelled, train_events, tuple(guarded))
