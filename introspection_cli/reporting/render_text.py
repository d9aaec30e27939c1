"""The terminal rendering of an eval report and of a baseline comparison.

Renders the typed report (:class:`~.report.EvalReport`, fresh or read from disk). Colour is
plain ANSI SGR, only when the caller asks (the CLI decides from the TTY and
``NO_COLOR``); Rich is not needed for a few aligned columns. Model reasoning
and conversation ids are untrusted text: control characters are removed so
a reply cannot move the cursor or recolour the terminal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from introspection_cli.evaluation.outcomes import OUTCOMES, VERDICTS
from introspection_cli.reporting.baseline import Comparison, JudgeComparison
from introspection_cli.reporting.formatting import (
    REASONING_LIMIT,
    clean,
    comparison_cells,
    comparison_header,
    edge_notes,
    first_listed,
    mcnemar_sentence,
    model_comparison_notes,
    model_comparison_table,
    model_comparison_title,
    more_rows_note,
    raters_sentences,
    stats_columns,
    unpaired_line,
    unpaired_summary,
)
from introspection_cli.reporting.metrics import REPORT_SPLITS, SCORED, SplitStats
from introspection_cli.reporting.model import Transcripts
from introspection_cli.reporting.report import (
    EvalReport,
    HeldOut,
    JudgeEntry,
    Rejected,
    ReportGate,
    ReportRow,
    as_report,
)
from introspection_cli.reporting.sentences import (
    disagreeing,
    erroring,
    gate_text,
    held_out_text,
    provenance_text,
    scored_text,
    stats_row,
    usage_text,
)

_STYLES = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33"}


class _Painter:
    """Wraps text in ANSI styles, or leaves it alone when colour is off."""

    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, text: str, style: str) -> str:
        return f"\x1b[{_STYLES[style]}m{text}\x1b[0m" if self.color else text


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "  ") -> list[str]:
    """Left-aligned first column, right-aligned numbers, two spaces between columns.

    A row of two cells is a note: its first cell aligned, the second written as it is.
    """
    full = [cells for cells in (header, *rows) if len(cells) == len(header)]
    widths = [max(len(cells[i]) for cells in full) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        first = cells[0].ljust(widths[0])
        if len(cells) != len(header):
            return (indent + "  ".join((first, *cells[1:]))).rstrip()
        rest = (cell.rjust(width) for cell, width in zip(cells[1:], widths[1:], strict=True))
        return (indent + "  ".join((first, *rest))).rstrip()

    return [line(header), *(line(cells) for cells in rows)]


def render_text(report: EvalReport | Mapping[str, Any], *, color: bool = False,
                comparison: Comparison | None = None,
                transcripts: Transcripts | None = None) -> str:
    """The human-readable report: per judge, the split table, confusion, rejected rows,
    disagreements and errors (the first :data:`~.formatting.LISTED_ROWS` of each, then a line saying
    where the rest are); then usage; then the comparison with a baseline, if given.
    (No conversation is shown: ``transcripts`` is the HTML page's.)"""
    report = as_report(report)
    paint = _Painter(color)
    lines = [paint(f"recipe {clean(report.recipe)}", "bold"),
             provenance_text(report.tool_version, report.created_at, report.git)]
    if not report.judges:
        lines.append("no judge was evaluated")
    for judge in report.judges:
        lines.append("")
        lines.extend(_judge_lines(judge, [gate for gate in report.gates
                                          if gate.judge == judge.name], paint,
                                  unstable=report.several_samples))
    lines += ["", f"usage: {usage_text(report.usage)}"]
    text = "\n".join(lines) + "\n"
    if comparison is not None:
        text += "\n" + render_comparison_text(comparison, color=color)
    return text


def _split_cells(split: str, stats: SplitStats | HeldOut, unstable: bool) -> list[str]:
    if isinstance(stats, HeldOut):
        return [split, held_out_text(stats.n)]
    return stats_row(split, stats, unstable=unstable)


def _judge_lines(judge: JudgeEntry, gates: Sequence[ReportGate],
                 paint: _Painter, *, unstable: bool) -> list[str]:
    model = clean(f"{judge.provider}/{judge.model}")
    lines = [paint(f"judge {judge.name}", "bold") + f" ({model})"]
    if judge.fingerprint:
        lines.append(f"  fingerprint {judge.fingerprint}")
    table = _table(stats_columns(unstable),
                   [_split_cells(split, judge.splits[split], unstable)
                    for split in REPORT_SPLITS])
    lines += [*table, f"  {scored_text(judge.splits)}",
              *(f"  {note}" for note in edge_notes(table))]
    ceiling = raters_sentences(judge.raters, judge.name, judge.scored.agreement)
    if ceiling:
        lines += ["", *(f"  {sentence}" for sentence in ceiling)]
    if gates:
        lines += ["", "  gates"]
        lines += [paint(f"    {gate_text(gate)}", "green" if gate.met else "red")
                  for gate in gates]
    header, compared = model_comparison_table(judge.model_comparison)
    if compared and judge.model_comparison is not None:
        lines += ["", f"  {model_comparison_title(judge.model_comparison)}",
                  *_table(header, compared, indent="    "),
                  *(f"    {note}" for note in model_comparison_notes(judge.model_comparison))]
    lines += ["", f"  confusion on split {SCORED} (rows: expected, columns: outcome)"]
    confusion = judge.scored.confusion
    lines += _table(("expected", *OUTCOMES),
                    [[label, *(str(confusion[label][o]) for o in OUTCOMES)] for label in VERDICTS],
                    indent="    ")
    for title, style, items, describe, note in _sections(judge):
        if items:
            lines += ["", paint(f"  {title} ({len(items)})", style)]
            shown, left_out = first_listed(items) if note else (items, 0)
            for item in shown:
                lines.extend("    " + text for text in describe(item))
            if note is not None and left_out:
                lines.append("    " + note(left_out))
    return lines


def _rejected_lines(rejected: Rejected) -> list[str]:
    return [f"line {rejected.line}: [{rejected.code}] {clean(rejected.message)}"]


def _error_lines(row: ReportRow) -> list[str]:
    return [f"line {row.line} {clean(row.conversation_id)}: expected {row.expected}, "
            f"error: {clean(row.error or 'no reason recorded', REASONING_LIMIT)}"]


#: A list of rows: its title, colour, rows, how one row is written, and (for a list cut
#: after :data:`LISTED_ROWS`) the line saying where the rest are.
_Section = tuple[str, str, Sequence[Any], Callable[[Any], list[str]],
                 Callable[[int], str] | None]


def _sections(judge: JudgeEntry) -> list[_Section]:
    # Rejected rows are all listed: each is a problem in the data, to fix before the
    # next run, as check lists every problem.
    return [
        ("rejected rows", "red", judge.rejected, _rejected_lines, None),
        ("disagreements", "yellow", disagreeing(judge.rows), _disagreement_lines,
         lambda left_out: more_rows_note(left_out, "disagreement", review=judge.name)),
        ("errors", "red", erroring(judge.rows), _error_lines,
         lambda left_out: more_rows_note(left_out, "error")),
    ]


def _disagreement_lines(row: ReportRow) -> list[str]:
    unstable = " (unstable: samples " + ", ".join(row.samples) + ")" if row.unstable else ""
    lines = [f"line {row.line} {clean(row.conversation_id)}: expected {row.expected}, "
             f"got {row.outcome}{unstable}"]
    if row.reasoning:
        lines.append(f"  reasoning: {clean(row.reasoning, REASONING_LIMIT)}")
    return lines


def render_comparison_text(comparison: Comparison, *, color: bool = False) -> str:
    """Per-judge, per-split deltas against the baseline, changed rows and McNemar's p-value."""
    paint = _Painter(color)
    lines = [paint("compared with baseline", "bold")]
    for name in comparison.judges_only_in_baseline:
        lines.append(f"  judge {name}: in the baseline only")
    for name in comparison.judges_only_in_current:
        lines.append(f"  judge {name}: new, not in the baseline")
    for judge in comparison.judges:
        lines += ["", *_comparison_judge_lines(judge, paint)]
    return "\n".join(lines) + "\n"


def _comparison_judge_lines(judge: JudgeComparison, paint: _Painter) -> list[str]:
    title = paint(f"judge {judge.name}", "bold")
    if judge.model_before != judge.model_after:
        title += f" (model {judge.model_before} → {judge.model_after})"
    rows = [[split.split, f"held out {split.held_out}"] if split.held_out
            else comparison_cells(split) for split in judge.splits]
    lines = [title, *_table(comparison_header(judge), rows)]
    tests = [mcnemar_sentence(test) for test in judge.tests]
    lines += [f"  {line}" for line in (*tests, *edge_notes(tests))]
    if judge.unpaired:
        lines.append(paint(f"  {unpaired_summary(judge)}", "yellow"))
        lines += [f"    {unpaired_line(row)}" for row in judge.unpaired]
    if judge.changed:
        lines.append(paint(f"  changed rows ({len(judge.changed)})", "yellow"))
    for row in judge.changed:
        label = (f"expected {row.expected_before} → {row.expected}" if row.relabelled
                 else f"expected {row.expected}")
        lines.append(f"    line {row.line} {clean(row.conversation_id)}: {label}, "
                     f"{row.before} → {row.after}")
    if judge.split_changes:
        lines.append(paint(f"  rows whose split changed ({len(judge.split_changes)})", "yellow"))
    for moved in judge.split_changes:
        lines.append(f"    line {moved.line} {clean(moved.conversation_id)}: "
                     f"{moved.before or 'unsplit'} → {moved.after or 'unsplit'}")
    return lines
