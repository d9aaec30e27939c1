"""``judges eval --html FILE``: the report as one self-contained HTML page.

Everything is in the file: the styles, two scripts (the labelling app's
transcript renderer, :mod:`introspection_cli.webui`, and this page's few lines
in ``assets/report.js``) and the conversations as JSON data. A Content
Security Policy allows exactly those scripts and styles by hash and nothing
from anywhere, so the page makes no request and nothing else in it can run.

Model reasoning, error messages and conversation ids are untrusted: they are
written HTML-escaped, never as markup, by :func:`untrusted` (the transcript
renderer's rule server-side: bounded time whatever their length, bidi controls
shown as visible escapes). Conversations reach the page only as
JSON inside ``<script type="application/json">`` (escaped so ``</script>`` or
``<!--`` in them cannot end it) and are drawn with DOM ``textContent`` when a
row is unfolded. Intervals are drawn as inline SVG built from numbers only
(a style attribute would need the CSP's ``unsafe-inline``).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

from introspection_cli import webui
from introspection_cli.evaluation.outcomes import OUTCOMES, VERDICTS
from introspection_cli.reporting.baseline import Comparison, JudgeComparison
from introspection_cli.reporting.formatting import (
    comparison_cells,
    comparison_header,
    edge_notes,
    mcnemar_sentence,
    model_comparison_notes,
    model_comparison_table,
    model_comparison_title,
    raters_sentences,
    stats_columns,
    unpaired_line,
    unpaired_summary,
    without_controls,
)
from introspection_cli.reporting.metrics import REPORT_SPLITS, SCORED, SplitStats, agrees
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
    NULL,
    disagreeing,
    erroring,
    format_bound,
    gate_text,
    held_out_text,
    kappa_text,
    provenance_text,
    scored_text,
    stats_counts,
    usage_text,
)
from introspection_cli.statistics import Interval

#: Conversations embedded per judge at most; further rows say theirs is not included.
TRANSCRIPT_LIMIT = 200
_INTERVALS = ("agreement", "na_agreement", "tpr", "tnr")
_NULL_CELL = f'<td class="null">{NULL}</td>'


def esc(text: object) -> str:
    """Short text as HTML text or an attribute value: escaped, control characters gone, bidi
    controls written as visible escapes (``\\u202e``)."""
    return html.escape(without_controls(webui.visible_bidi(str(text))), quote=True)


def untrusted(text: object) -> str:
    """Untrusted text (reasoning, errors, conversation ids) as element content, drawn as the
    transcript renderer draws it (:func:`introspection_cli.webui.page_text`): in bounded
    time whatever its length, bidi controls shown as visible escapes."""
    return webui.page_text(str(text))


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath("assets", name).read_text(encoding="utf-8")


def render_html(report: EvalReport | Mapping[str, Any], *, comparison: Comparison | None = None,
                transcripts: Transcripts | None = None, color: bool = False) -> str:
    """The whole page. ``transcripts`` holds the conversations of the rows shown (``color``
    is a terminal's: the page has its own)."""
    report = as_report(report)
    css = _asset("report.css") + webui.asset_text(webui.TRANSCRIPT_CSS)
    scripts = [webui.asset_text(webui.TRANSCRIPT_JS), _asset("report.js")]
    embedded: dict[str, Any] = {}
    body = [_header(report)]
    for index, judge in enumerate(report.judges):
        body += _judge_section(report, judge, index, (transcripts or {}).get(judge.name, {}),
                               embedded)
    if comparison is not None:
        body += _baseline_section(comparison)
    body.append(_footer(report))
    csp = webui.inline_csp(scripts, styles=[css])
    return "\n".join([
        "<!doctype html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">',
        '<meta name="referrer" content="no-referrer">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Judge calibration: {esc(report.recipe)}</title>",
        f"<style>{css}</style>", "</head>", "<body>", *body,
        '<script type="application/json" id="report-data">'
        + webui.script_json({"transcripts": embedded}) + "</script>",
        *(f"<script>{script}</script>" for script in scripts),
        "</body>", "</html>", ""])


def _header(report: EvalReport) -> str:
    links = "".join(f'<li><a href="#judge-{i}">{esc(judge.name)}</a></li>'
                    for i, judge in enumerate(report.judges))
    provenance = provenance_text(report.tool_version, report.created_at, report.git)
    return (f"<header><h1>Judge calibration</h1><p>Recipe <code>{esc(report.recipe)}</code>"
            f"</p><p class=\"meta\">{esc(provenance)}</p></header>"
            + (f"<nav><ul>{links}</ul></nav>" if links else "<p>No judge was evaluated.</p>")
            + '<p class="controls"><button type="button" id="expand-all">Unfold every row'
            '</button> <button type="button" id="collapse-all">Fold every row</button></p>'
            "<noscript><p class=\"note\">Conversations are shown with JavaScript on.</p>"
            "</noscript>")


def _judge_section(report: EvalReport, judge: JudgeEntry, index: int,
                   events: Mapping[int, Sequence[Any]], embedded: dict[str, Any]) -> list[str]:
    parts = [f'<section class="judge" id="judge-{index}">',
             f"<h2>{esc(judge.name)} <span class=\"muted\">"
             f"{esc(judge.provider + '/' + judge.model)}</span></h2>"]
    if judge.fingerprint:
        parts.append(f'<p class="meta">Fingerprint <code>{esc(judge.fingerprint)}</code></p>')
    gates = [gate for gate in report.gates if gate.judge == judge.name]
    parts += [*_splits(judge, unstable=report.several_samples), *_ceiling(judge),
              *_side_by_side(_gates(gates), _confusion(judge.scored)),
              *_models(judge), *_rejected(judge.rejected)]
    listed = (("Disagreements", disagreeing(judge.rows)), ("Errors", erroring(judge.rows)))
    included = 0
    for title, chosen in listed:
        parts.append(f"<h3>{title} ({len(chosen)})</h3>")
        if not chosen:
            parts.append('<p class="muted">None.</p>')
        for row in chosen:
            key = f"{index}:{row.line}"
            missing = None
            if row.line not in events:
                missing = ("The conversation is not in this report: its calibration row "
                           "changed after the run.")
            elif included >= TRANSCRIPT_LIMIT:
                missing = (f"The page embeds the conversations of the first {TRANSCRIPT_LIMIT} "
                           f"rows of a judge: this one is line {row.line} of the "
                           "calibration file.")
            else:
                embedded[key] = list(events[row.line])
                included += 1
            parts.append(_row(row, key, missing))
    parts.append("</section>")
    return parts


def _ceiling(judge: JudgeEntry) -> list[str]:
    """The human ceiling beside the judge's agreement (when the judge has raters)."""
    sentences = raters_sentences(judge.raters, judge.name, judge.scored.agreement,
                                 shown=lambda name: name)
    if not sentences:
        return []
    items = "".join(f"<li>{esc(sentence)}</li>" for sentence in sentences)
    return [f'<div class="ceiling"><h3>Human ceiling</h3><ul>{items}</ul></div>']


def _side_by_side(*blocks: list[str]) -> list[str]:
    """Blocks a wide window shows next to each other (a narrow one, and print, one under
    the other)."""
    shown = [f"<div>{''.join(block)}</div>" for block in blocks if block]
    return [f'<div class="pair">{"".join(shown)}</div>'] if shown else []


def _row(row: ReportRow, key: str, missing: str | None) -> str:
    """One disagreement or error, folded: its reasoning or error, and its conversation."""
    outcome = row.outcome + (" (unstable)" if row.unstable else "")
    summary = (f"line {row.line} <code>{untrusted(row.conversation_id)}</code> expected "
               f"<span class=\"label\">{esc(row.expected)}</span> got "
               f"<span class=\"label\">{esc(outcome)}</span>")
    why = []
    if row.outcome == "error":
        why.append('<p class="caption">Error</p><div class="error-text">'
                   f'{untrusted(row.error or "no reason recorded")}</div>')
    elif row.reasoning:
        why.append('<p class="caption">The model\'s reasoning</p>'
                   f'<div class="reasoning">{untrusted(row.reasoning)}</div>')
    if len(row.samples) > 1:
        why.append(f'<p class="muted">Samples: {esc(", ".join(row.samples))}</p>')
    note = f' data-missing="{esc(missing)}"' if missing else ""
    conversation = ('<p class="caption">The conversation</p>'
                    f'<div class="transcript" data-key="{esc(key)}"{note}></div>')
    # In a wide window the reasoning stands beside the conversation it is about.
    return (f'<details class="row"><summary>{summary}</summary><div class="row-body">'
            f'<div class="why">{"".join(why)}</div><div>{conversation}</div></div></details>')


def _bar(interval: Interval) -> str:
    low, high, value = (round(100 * bound, 2)
                        for bound in (interval.low, interval.high, interval.value))
    return (f'<svg class="bar" viewBox="0 0 100 10" preserveAspectRatio="none" '
            f'aria-hidden="true"><rect class="track" x="0" y="1" width="100" height="8"/>'
            f'<rect class="ci" x="{low}" y="1" width="{round(high - low, 2)}" height="8"/>'
            f'<line class="point" x1="{value}" y1="0" x2="{value}" y2="10"/></svg>')


def _interval(interval: Interval | None) -> str:
    """An interval's cell: the bar over the value and its bounds (which wrap under the
    value in a narrow window)."""
    if interval is None:
        return _NULL_CELL
    return (f'<td class="iv"><span class="stat">{_bar(interval)}<span><span class="nw">'
            f"{interval.value:.3f}</span> <span class=\"nw muted bounds\">"
            f"({format_bound(interval.low)}–{format_bound(interval.high)})</span>"
            "</span></span></td>")


def _column(name: str) -> str:
    """A column name that may wrap after an underscore (``na_agreement``) in a narrow window."""
    return esc(name).replace("_", "_<wbr>")


def _split_cells(stats: SplitStats, *, unstable: bool) -> str:
    """A split's cells after its name: the counts, then the statistics (the columns of
    :func:`~.formatting.stats_columns`)."""
    return "".join([*(f"<td>{count}</td>" for count in stats_counts(stats, unstable=unstable)),
                    _interval(stats.agreement), _interval(stats.na_agreement),
                    f"<td>{kappa_text(stats.kappa)}</td>", _interval(stats.tpr),
                    _interval(stats.tnr)])


def _splits(judge: JudgeEntry, *, unstable: bool) -> list[str]:
    """One row per split, the columns of the text report, each interval drawn as a bar."""
    columns = stats_columns(unstable)
    rows = []
    for split in REPORT_SPLITS:
        stats = judge.splits[split]
        if isinstance(stats, HeldOut):
            rows.append(f'<tr><td>{split}</td><td colspan="{len(columns) - 1}" class="wrap">'
                        f"{esc(held_out_text(stats.n))}</td></tr>")
        else:
            rows.append(f"<tr><td>{split}</td>{_split_cells(stats, unstable=unstable)}</tr>")
    notes = [scored_text(judge.splits), *edge_notes(rows)]
    if any(_NULL_CELL in row for row in rows):
        notes.append(f"{NULL} no row to score: the statistic's denominator is empty")
    head = "".join(f"<th>{_column(name)}</th>" for name in columns)
    return ["<h3>Splits</h3>",
            f'<p class="muted">{", ".join(_INTERVALS)}: the value and its Wilson 95% interval, '
            "drawn from the lower to the upper bound with a tick at the value.</p>",
            f'<div class="scroll"><table class="splits"><thead><tr>{head}</tr></thead><tbody>'
            + "".join(rows) + "</tbody></table></div>",
            *(f'<p class="muted">{esc(note)}.</p>' for note in notes)]


def _gates(gates: Sequence[ReportGate]) -> list[str]:
    if not gates:
        return []
    items = "".join(f'<li><span class="{"met" if g.met else "missed"}">'
                    f'{"met" if g.met else "MISSED"}</span> {esc(gate_text(g))}</li>'
                    for g in gates)
    return ["<h3>Gates</h3>", f'<ul class="gates">{items}</ul>']


def _models(judge: JudgeEntry) -> list[str]:
    comparison = judge.model_comparison
    header, rows = model_comparison_table(comparison)
    if not rows or comparison is None:
        return []
    head = "".join(f"<th>{esc(name)}</th>" for name in header)
    body = "".join("<tr>" + "".join(f"<td>{esc(cell)}</td>" for cell in row) + "</tr>"
                   for row in rows)
    title = esc(model_comparison_title(comparison))
    return ["<h3>Models compared</h3>", f'<p class="muted">{title}'
            f'</p><div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}'
            "</tbody></table></div>",
            *(f'<p class="muted">{esc(note)}.</p>'
              for note in model_comparison_notes(comparison))]


def _confusion(stats: SplitStats) -> list[str]:
    confusion = stats.confusion
    head = "".join(f"<th>{outcome}</th>" for outcome in OUTCOMES)
    rows = []
    for label in VERDICTS:
        total = sum(confusion[label].values())
        cells = []
        for outcome in OUTCOMES:
            count = confusion[label][outcome]
            shade = 0 if not count else 1 + min(4, 5 * count // max(total, 1))
            agree = " agree" if outcome != "error" and agrees(label, outcome) else ""
            cells.append(f'<td class="cell h{shade}{agree}">{count}</td>')
        rows.append(f"<tr><th>{label}</th>{''.join(cells)}</tr>")
    return [f"<h3>Confusion on split {SCORED}</h3>",
            '<p class="muted">Rows: the label; columns: the outcome; darker: a larger share '
            "of the label's rows; outlined: the outcome agrees with the label.</p>",
            f'<div class="scroll"><table class="heat"><thead><tr><th>expected</th>{head}</tr>'
            f"</thead><tbody>{''.join(rows)}</tbody></table></div>"]


def _rejected(rejected: Sequence[Rejected]) -> list[str]:
    if not rejected:
        return []
    items = "".join(f"<li>line {r.line}: <code>{esc(r.code)}</code> {untrusted(r.message)}"
                    "</li>" for r in rejected)
    return [f"<h3>Rejected rows ({len(rejected)})</h3>", f"<ul>{items}</ul>"]


def _baseline_section(comparison: Comparison) -> list[str]:
    parts = ['<section class="baseline" id="baseline"><h2>Compared with the baseline</h2>']
    parts += [f"<p><code>{esc(name)}</code>: in the baseline only.</p>"
              for name in comparison.judges_only_in_baseline]
    parts += [f"<p><code>{esc(name)}</code>: new, not in the baseline.</p>"
              for name in comparison.judges_only_in_current]
    for judge in comparison.judges:
        parts += _baseline_judge(judge)
    parts.append("</section>")
    return parts


def _baseline_judge(judge: JudgeComparison) -> list[str]:
    model = (f" <span class=\"muted\">model {esc(judge.model_before)} → "
             f"{esc(judge.model_after)}</span>" if judge.model_before != judge.model_after else "")
    header = comparison_header(judge)
    head = "".join(f"<th>{_column(name)}</th>" for name in header)
    rows = []
    for split in judge.splits:
        if split.held_out:
            rows.append(f'<tr><td>{split.split}</td><td colspan="{len(header) - 1}" '
                        f'class="wrap">held out {esc(split.held_out)}</td></tr>')
            continue
        rows.append("<tr>" + "".join(f"<td>{_wrappable(text)}</td>"
                                     for text in comparison_cells(split)) + "</tr>")
    tests = [mcnemar_sentence(test) for test in judge.tests]
    parts = [f"<h3><code>{esc(judge.name)}</code>{model}</h3>",
             f'<div class="scroll"><table class="deltas"><thead><tr>{head}</tr></thead><tbody>'
             f'{"".join(rows)}</tbody></table></div>',
             "<ul>" + "".join(f"<li>{esc(sentence)}.</li>" for sentence in tests) + "</ul>",
             *(f'<p class="muted">{esc(note)}.</p>' for note in edge_notes(tests))]
    if judge.unpaired:
        items = "".join(f"<li>{esc(unpaired_line(r))}</li>" for r in judge.unpaired)
        parts.append(f"<details><summary>{esc(unpaired_summary(judge))}</summary>"
                     f"<ul>{items}</ul></details>")
    if judge.changed:
        items = "".join(
            f"<li>line {r.line} <code>{esc(r.conversation_id)}</code>: expected "
            f"{esc(r.expected_before + ' → ' + r.expected if r.relabelled else r.expected)}, "
            f"{esc(r.before)} → {esc(r.after)}</li>" for r in judge.changed)
        parts.append(f"<details><summary>Changed rows ({len(judge.changed)})</summary>"
                     f"<ul>{items}</ul></details>")
    if judge.split_changes:
        items = "".join(f"<li>line {r.line} <code>{esc(r.conversation_id)}</code>: "
                        f"{esc(r.before or 'unsplit')} → {esc(r.after or 'unsplit')}</li>"
                        for r in judge.split_changes)
        parts.append(f"<details><summary>Rows whose split changed ({len(judge.split_changes)})"
                     f"</summary><ul>{items}</ul></details>")
    return parts


def _wrappable(cell: str) -> str:
    """A change (``0.929 → 0.857 (-0.071)``) that a narrow window may wrap before its
    difference, and nowhere else."""
    change, space, difference = cell.partition(" (")
    if not space:
        return esc(cell)
    return f'<span class="nw">{esc(change)}</span> <span class="nw">({esc(difference)}</span>'


def _footer(report: EvalReport) -> str:
    return (f"<footer><p>Usage: {esc(usage_text(report.usage))}.</p>"
            "<p>Written by <code>introspection judges eval --html</code>.</p></footer>")
