"""The GitHub-flavoured Markdown rendering of an eval report, for pull-request comments.

A table of splits per judge, the confusion matrix and the rejected,
disagreeing and error rows (long lists folded in ``<details>``; the first
:data:`~.formatting.LISTED_ROWS` disagreements and errors, then a line saying
where the rest are), usage, and the baseline comparison when there is one.
Untrusted text (reasoning, conversation ids, messages) is escaped so it
cannot break a table or inject markup into the comment.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
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
    ReportGate,
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

#: Row lists longer than this are folded into a ``<details>`` block.
FOLD_AFTER = 10


def cell(text: str, limit: int | None = None) -> str:
    """``text`` safe inside a table cell: one line, HTML escaped, pipes and backticks escaped."""
    escaped = html.escape(clean(text, limit), quote=False)
    # "@" as an entity so model reasoning cannot mention (and notify) a GitHub user.
    return escaped.replace("|", "\\|").replace("`", "\\`").replace("@", "&#64;")


def code(text: str) -> str:
    """``text`` as an inline code span (backticks inside it would end the span early)."""
    return "`" + clean(text).replace("`", "'") + "`"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header),
            *("| " + " | ".join(cells) + " |" for cells in rows)]


def _folded(title: str, table: list[str], count: int) -> list[str]:
    if count <= FOLD_AFTER:
        return [f"**{title}** ({count})", "", *table]
    return [f"<details><summary>{title} ({count})</summary>", "", *table, "", "</details>"]


def render_markdown(report: EvalReport | Mapping[str, Any], *, comparison: Comparison | None = None,
                    color: bool = False, transcripts: Transcripts | None = None) -> str:
    """The report (and the comparison with a baseline, if given) as GitHub-flavoured Markdown
    (never colored; no conversation is shown: ``transcripts`` is the HTML page's)."""
    report = as_report(report)
    lines = [f"## Judge calibration: {code(report.recipe)}", "",
             cell(provenance_text(report.tool_version, report.created_at, report.git)) + "."]
    if not report.judges:
        lines += ["", "No judge was evaluated."]
    for judge in report.judges:
        lines += ["", *_judge_markdown(judge, [gate for gate in report.gates
                                               if gate.judge == judge.name],
                                       unstable=report.several_samples)]
    lines += ["", f"Usage: {cell(usage_text(report.usage))}."]
    if comparison is not None:
        lines += ["", *comparison_markdown(comparison)]
    return "\n".join(lines) + "\n"


def _split_cells(split: str, stats: SplitStats | HeldOut, unstable: bool) -> list[str]:
    if not isinstance(stats, HeldOut):
        return stats_row(split, stats, unstable=unstable)
    return [split, cell(held_out_text(stats.n)), *([""] * (len(stats_columns(unstable)) - 2))]


def _judge_markdown(judge: JudgeEntry, gates: Sequence[ReportGate], *,
                    unstable: bool) -> list[str]:
    lines = [f"### {code(judge.name)} ({code(judge.provider + '/' + judge.model)})", ""]
    if judge.fingerprint:
        lines += [f"Fingerprint {code(judge.fingerprint)}", ""]
    table = _table(stats_columns(unstable),
                   [_split_cells(split, judge.splits[split], unstable)
                    for split in REPORT_SPLITS])
    lines += [*table, "", cell(scored_text(judge.splits)) + "."]
    lines += [text for note in edge_notes(table) for text in ("", f"{cell(note)}.")]
    ceiling = raters_sentences(judge.raters, judge.name, judge.scored.agreement,
                               shown=lambda name: cell(name, 64))
    if ceiling:
        lines += ["", "**Human ceiling**", "", *(f"- {sentence}" for sentence in ceiling)]
    if gates:
        lines += ["", "**Gates**", ""]
        lines += [f"- {'✅' if gate.met else '❌'} {cell(gate_text(gate))}" for gate in gates]
    header, compared = model_comparison_table(judge.model_comparison)
    if compared and judge.model_comparison is not None:
        title = model_comparison_title(judge.model_comparison)
        lines += ["", f"**{title[0].upper()}{title[1:]}**", "",
                  *_table(header, [[cell(text) for text in row] for row in compared])]
        lines += [text for note in model_comparison_notes(judge.model_comparison)
                  for text in ("", f"{cell(note)}.")]
    confusion = judge.scored.confusion
    lines += ["", f"Confusion on split `{SCORED}` (rows: expected, columns: outcome)", ""]
    lines += _table(("expected", *OUTCOMES),
                    [[label, *(str(confusion[label][o]) for o in OUTCOMES)] for label in VERDICTS])
    lines += _row_lists(judge)
    return lines


def _row_lists(judge: JudgeEntry) -> list[str]:
    lines: list[str] = []
    rejected = judge.rejected
    if rejected:
        table = _table(("line", "code", "message"),
                       [[str(r.line), f"`{r.code}`", cell(r.message)] for r in rejected])
        lines += ["", *_folded("Rejected rows", table, len(rejected))]
    disagreeing_rows = disagreeing(judge.rows)
    if disagreeing_rows:
        shown, left_out = first_listed(disagreeing_rows)
        table = _table(("line", "conversation", "expected", "outcome", "reasoning"),
                       [[str(r.line), cell(r.conversation_id), r.expected,
                         r.outcome + (" (unstable)" if r.unstable else ""),
                         cell(r.reasoning or "", REASONING_LIMIT)] for r in shown])
        table += _more(left_out, "disagreement", review=judge.name)
        lines += ["", *_folded("Disagreements", table, len(disagreeing_rows))]
    errors = erroring(judge.rows)
    if errors:
        shown, left_out = first_listed(errors)
        table = _table(("line", "conversation", "expected", "error"),
                       [[str(r.line), cell(r.conversation_id), r.expected,
                         cell(r.error or "no reason recorded", REASONING_LIMIT)]
                        for r in shown])
        table += _more(left_out, "error")
        lines += ["", *_folded("Errors", table, len(errors))]
    return lines


def _more(left_out: int, noun: str, *, review: str | None = None) -> list[str]:
    """The paragraph under a cut list saying where its other rows are (none if it is whole)."""
    return ["", more_rows_note(left_out, noun, review=review, code=code) + "."] if left_out else []


def comparison_markdown(comparison: Comparison) -> list[str]:
    """The baseline comparison as Markdown lines: a delta table per judge, changed rows."""
    lines = ["### Compared with baseline"]
    for name in comparison.judges_only_in_baseline:
        lines += ["", f"{code(name)}: in the baseline only."]
    for name in comparison.judges_only_in_current:
        lines += ["", f"{code(name)}: new, not in the baseline."]
    for judge in comparison.judges:
        lines += ["", *_judge_comparison_markdown(judge)]
    return lines


def _judge_comparison_markdown(judge: JudgeComparison) -> list[str]:
    title = f"**{code(judge.name)}**"
    if judge.model_before != judge.model_after:
        title += f" (model {code(judge.model_before)} → {code(judge.model_after)})"
    header = comparison_header(judge)
    rows = [[split.split, f"held out {split.held_out}", *([""] * (len(header) - 2))]
            if split.held_out else comparison_cells(split) for split in judge.splits]
    lines = [title, "", *_table(header, rows), ""]
    tests = [mcnemar_sentence(test) for test in judge.tests]
    lines += [f"- {cell(sentence)}." for sentence in tests]
    lines += [text for note in edge_notes(tests) for text in ("", f"{cell(note)}.")]
    if judge.unpaired:
        listed = [f"- {cell(unpaired_line(row))}" for row in judge.unpaired]
        lines += ["", *_folded("Rows not paired", [f"{cell(unpaired_summary(judge))}.", "",
                                                   *listed], len(judge.unpaired))]
    if judge.changed:
        table = _table(("line", "conversation", "expected", "baseline", "now"),
                       [[str(r.line), cell(r.conversation_id),
                         f"{r.expected_before} → {r.expected}" if r.relabelled else r.expected,
                         r.before, r.after] for r in judge.changed])
        lines += ["", *_folded("Changed rows", table, len(judge.changed))]
    if judge.split_changes:
        table = _table(("line", "conversation", "baseline split", "split now"),
                       [[str(r.line), cell(r.conversation_id), r.before or "unsplit",
                         r.after or "unsplit"] for r in judge.split_changes])
        lines += ["", *_folded("Rows whose split changed", table, len(judge.split_changes))]
    return lines
