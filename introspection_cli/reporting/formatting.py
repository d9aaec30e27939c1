"""Formatting helpers every report renderer shares (and nothing else).

With :mod:`.sentences` (how the typed report is written in words), what renderers
share besides the report model and the comparisons: how a delta, a model
comparison and the human ceiling (the two parts the report keeps as JSON
objects) are written, how untrusted text (model reasoning, conversation ids) is
made safe to show on one line, and how long a list of rows gets.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from introspection_cli.reporting.baseline import (
    JudgeComparison,
    McNemar,
    SplitDelta,
    StatDelta,
    UnpairedRow,
)
from introspection_cli.reporting.metrics import SCORED
from introspection_cli.reporting.report import interval_from_json
from introspection_cli.reporting.sentences import (
    EDGE_MARK,
    EDGE_NOTE,
    NULL,
    format_bound,
    format_cost,
    interval_text,
    kappa_text,
)
from introspection_cli.statistics import Interval

#: Longest reasoning shown for one disagreement; the JSON report keeps it whole.
REASONING_LIMIT = 280
#: Disagreements the text and Markdown reports list per judge, and apart its errors (a
#: run's errors often share one cause, and should not crowd out its disagreements); one
#: line then says how many more and where they are. JSON and HTML list every row.
LISTED_ROWS = 20
#: Below this McNemar p-value a change in agreement is called unlikely to be chance.
SIGNIFICANCE = 0.05
_Listed = TypeVar("_Listed")

# C0/C1 controls (ESC starts terminal escape sequences) and the bidirectional
# overrides that can make displayed text read differently from what it is.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_WHITESPACE = re.compile(r"\s+")

STATS_COLUMNS: tuple[str, ...] = ("split", "n", "judged", "gated", "errors", "unstable",
                                  "agreement", "na_agreement", "kappa", "tpr", "tnr")


def clean(text: str, limit: int | None = None) -> str:
    """``text`` on one line without control characters, cut at ``limit`` chars with an ellipsis."""
    flat = _WHITESPACE.sub(" ", _CONTROL.sub(" ", text)).strip()
    if limit is not None and len(flat) > limit:
        return flat[: limit - 1].rstrip() + "…"
    return flat


def without_controls(text: str) -> str:
    """``text`` without control characters and bidirectional overrides; line breaks and
    tabs kept (for text shown as a block, such as reasoning in the HTML report)."""
    return _CONTROL.sub("", text)


def edge_notes(lines: Sequence[str]) -> list[str]:
    """``[EDGE_NOTE]`` when one of ``lines`` (numbers the reports wrote) marks a bound."""
    return [EDGE_NOTE] if any(EDGE_MARK in line for line in lines) else []


def format_delta(delta: StatDelta) -> str:
    """``0.750 → 0.833 (+0.083)``; a null side shows the null mark and no difference."""
    before = NULL if delta.before is None else f"{delta.before:.3f}"
    after = NULL if delta.after is None else f"{delta.after:.3f}"
    change = "" if delta.delta is None else f" ({delta.delta:+.3f})"
    return f"{before} → {after}{change}"


def stats_columns(unstable: bool) -> tuple[str, ...]:
    """The columns of a split table: :data:`STATS_COLUMNS`, ``unstable`` only when the run
    made several calls per row (with one, no row can be unstable: a column of zeros)."""
    return STATS_COLUMNS if unstable else tuple(c for c in STATS_COLUMNS if c != "unstable")


def first_listed(rows: Sequence[_Listed]) -> tuple[Sequence[_Listed], int]:
    """The rows a text or Markdown report lists (the first :data:`LISTED_ROWS`) and how
    many it leaves out."""
    return rows[:LISTED_ROWS], max(0, len(rows) - LISTED_ROWS)


def _as_is(text: str) -> str:
    return text


def more_rows_note(left_out: int, noun: str, *, review: str | None = None,
                   code: Callable[[str], str] = _as_is) -> str:
    """``… 486 more disagreements not listed: see --html FILE or --format json (--output
    REPORT.json); review them with introspection judges label --judge NAME --review
    REPORT.json``: where the rows a text or Markdown report leaves out are. ``noun`` is
    singular; ``review`` names the judge when ``judges label --review`` queues the rows
    (disagreements, not errors); ``code`` marks up each flag and command (Markdown's
    code spans)."""
    plural = noun if left_out == 1 else noun + "s"
    note = (f"… {left_out} more {plural} not listed: see {code('--html FILE')} or "
            f"{code('--format json')} ({code('--output REPORT.json')})")
    if review is not None:
        note += "; review them with " + code(
            f"introspection judges label --judge {clean(review)} --review REPORT.json")
    return note


#: How each paired test is introduced.
_SCOPES = {"all": "all paired rows", "pass": "rows labelled pass (TPR)",
           "fail": "rows labelled fail (TNR)"}


def mcnemar_sentence(test: McNemar) -> str:
    """A paired test in words: rows that flipped each way, the mid-p value and what it means,
    and the change in agreement with its 95% interval."""
    if not test.paired:
        return f"{_SCOPES[test.scope]}: none paired, nothing to compare"
    # The reading users need, not just the number: 0.05 is the conventional line, read
    # off the adjusted p-value when the test is one of a family.
    decisive = test.p_value if test.p_adjusted is None else test.p_adjusted
    verdict = "unlikely to be chance" if decisive < SIGNIFICANCE else "could be chance"
    adjusted = "" if test.p_adjusted is None else f", Holm-adjusted {test.p_adjusted:.3g}"
    sentence = (f"{_SCOPES[test.scope]}: {test.paired} paired, {test.improved} now agree, "
                f"{test.regressed} no longer agree; McNemar mid-p = {test.p_value:.3g}"
                f"{adjusted} ({verdict})")
    if test.difference is not None:
        change = test.difference
        sentence += (f"; change {change.value:+.3f} (95% interval "
                     f"{format_bound(change.low, signed=True)} to "
                     f"{format_bound(change.high, signed=True)})")
    return sentence


def comparison_header(judge: JudgeComparison) -> list[str]:
    """The columns of a baseline comparison's split table."""
    return ["split", "paired", *(delta.statistic for delta in judge.splits[0].statistics),
            "not paired"]


def comparison_cells(split: SplitDelta) -> list[str]:
    """One split of a baseline comparison: the paired rows' count, each statistic's change
    over them, and the rows of the split that have no pair (in no figure of the row)."""
    unpaired = (f"{split.only_in_baseline} only before, {split.only_in_current} only now"
                if split.unpaired else "0")
    return [split.split, str(split.paired), *(format_delta(delta) for delta in split.statistics),
            unpaired]


def unpaired_summary(judge: JudgeComparison) -> str:
    """``rows not paired (12): 0 only in the baseline, 12 only in this run, 0 whose
    conversation text changed; no delta or test counts them``."""
    return (f"rows not paired ({len(judge.unpaired)}): {judge.only_in_baseline} only in the "
            f"baseline, {judge.only_in_current} only in this run, {judge.text_changed} whose "
            "conversation text changed; no delta or test counts them")


#: How each kind of unpaired row is described.
_UNPAIRED = {"baseline": "only in the baseline (its line there)",
             "this run": "only in this run",
             "text changed": "its conversation text changed (snapshot_hash differs)"}


def unpaired_line(row: UnpairedRow) -> str:
    """``line 24 conv_x: only in this run``: one row without a pair."""
    return f"line {row.line} {clean(row.conversation_id)}: {_UNPAIRED[row.where]}"


#: The columns of a judge's model comparison (``--model`` given more than once); ``cost``
#: and ``spent`` only when a price is known for some model.
MODEL_COLUMNS: tuple[str, ...] = ("model", "judged", "errors", "agreement", "tpr", "tnr",
                                  "kappa", "tokens", "cost", "spent", "mid-p")
#: Tokens or a cost that cannot be told: a cached reply's tokens were not recorded.
UNKNOWN = "unknown"


def model_comparison_table(comparison: Mapping[str, Any] | None
                           ) -> tuple[list[str], list[list[str]]]:
    """The header and one row per model of a judge's ``model_comparison`` (no rows for a
    single-model judge, whose is None): point values, the intervals stay in the JSON."""
    if not comparison:
        return [], []
    models = comparison["models"]
    priced = any(model["spent"] is not None for model in models)
    rows = []
    for model in models:
        test = model["mcnemar"]
        known = model["input_tokens"] is not None
        money = [UNKNOWN if model["spent"] is not None and not known
                 else _dollars(model["cost"]), _dollars(model["spent"])]
        rows.append([
            clean(f"{model['provider']}/{model['model']}"), str(model["judged"]),
            str(model["errors"]),
            *(NULL if model[key] is None else f"{model[key]['value']:.3f}"
              for key in ("agreement", "tpr", "tnr")),
            kappa_text(model["kappa"]),
            f"{model['input_tokens']}/{model['output_tokens']}" if known else UNKNOWN,
            *(money if priced else []),
            "first" if test is None else f"{test['p_value']:.3g}",
        ])
    header = [c for c in MODEL_COLUMNS if priced or c not in ("cost", "spent")]
    return header, rows


def _dollars(cost: float | None) -> str:
    return NULL if cost is None else format_cost(cost)


def model_comparison_title(comparison: Mapping[str, Any]) -> str:
    """What a judge's model comparison table shows, in a line."""
    split = comparison["split"]
    priced = any(model["spent"] is not None for model in comparison["models"])
    money = "; cost: their price; spent: what this run paid" if priced else ""
    return (f"models compared on split {split}, the same rows (tokens: input/output the rows "
            f"need, from the cache or not{money}; mid-p: McNemar against the first model)")


def model_comparison_notes(comparison: Mapping[str, Any]) -> list[str]:
    """Why a model's tokens are unknown in a judge's model comparison, when they are."""
    unknown = [f"{clean(model['provider'] + '/' + model['model'])} {model['unknown_token_rows']}"
               for model in comparison["models"] if model["unknown_token_rows"]]
    if not unknown:
        return []
    return [f"tokens {UNKNOWN}: rows answered from cache entries an earlier introspection "
            f"wrote without token counts ({', '.join(unknown)}), so what those rows cost "
            "cannot be told"]


def raters_sentences(raters: Mapping[str, Any] | None, judge: str, own: Interval | None,
                     shown: Callable[[str], str] = clean) -> list[str]:
    """The human ceiling beside the judge (a report with ``raters``; none without): the
    raters' alpha and pairwise applicable agreement, then the judge's own applicable
    agreement (``own``) on the rows it scored. ``shown`` makes a rater's name safe for
    the format."""
    if raters is None:
        return []
    names = ", ".join(shown(name) for name in raters["raters"])
    head = f"human ceiling: {len(raters['raters'])} rater(s) ({names}) on {raters['units']} rows"
    alpha = raters["alpha"]
    if alpha is None:
        lines = [f"{head}; agreement cannot be computed: {shown(raters['problem'] or '')}"]
    else:
        lines = [f"{head}; Krippendorff's alpha {alpha['value']:.3f} ({alpha['low']:.3f}–"
                 f"{alpha['high']:.3f}, bootstrap 95%)"]
    pairs = [f"{shown(pair['raters'][0])}–{shown(pair['raters'][1])} "
             f"{interval_text(interval_from_json(pair['applicable_agreement']))}" + (
                 f" over {pair['applicable_agreement']['n']}"
                 if pair["applicable_agreement"] else "") for pair in raters["pairs"]]
    if pairs:
        lines.append("raters' applicable agreement: " + "; ".join(pairs))
    lines.append(f"judge's applicable agreement ({SCORED}): {interval_text(own)}; a "
                 "judge cannot be expected to agree with a person more than people agree "
                 "with each other")
    if raters["conflicts"]:
        lines.append(f"{raters['conflicts']} row(s) in conflict (the raters disagree): settle "
                     "them with "
                     f"`introspection judges label --adjudicate --judge {judge}`")
    return lines
