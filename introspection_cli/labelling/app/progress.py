"""How far a session is: per judge, rows labelled of the queue's, and what is left to do."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from introspection_cli.labelling.app.items import Item
from introspection_cli.labelling.app.judgefile import JudgeFile
from introspection_cli.labelling.calibration import CalibrationLine

#: Of a judge's line: whether it still needs work (rejected lines included), or is done.
LineTest = Callable[[JudgeFile, CalibrationLine], bool]


@dataclass(slots=True)
class Summary:
    """judge -> {"labelled", "total"} over the queue, and its conversations still to do
    with the judges' lines left on each."""

    progress: dict[str, dict[str, int]] = field(default_factory=dict)
    remaining: list[tuple[Item, list[tuple[str, CalibrationLine]]]] = field(default_factory=list)


def summarize(files: Sequence[JudgeFile], queued: Sequence[Item],
              line_of: Callable[[JudgeFile, Item], CalibrationLine | None],
              left: LineTest, done: LineTest) -> Summary:
    """The summary of the ``queued`` conversations: a trusted line counts in its judge's
    total, and as labelled when ``done``; a line ``left`` is still to do."""
    summary = Summary({jf.name: {"labelled": 0, "total": 0} for jf in files})
    for item in queued:
        remaining = []
        for jf in files:
            line = line_of(jf, item)
            if line is None:
                continue
            if line.row is not None:
                summary.progress[jf.name]["total"] += 1
                summary.progress[jf.name]["labelled"] += done(jf, line)
            if left(jf, line):
                remaining.append((jf.name, line))
        if remaining:
            summary.remaining.append((item, remaining))
    return summary
