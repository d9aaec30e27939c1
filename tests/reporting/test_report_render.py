"""The text and Markdown renderings of an eval report."""

from __future__ import annotations

from typing import Any

from introspection_cli.evaluation.outcomes import EvalRun, JudgeRun, RejectedRow, RowOutcome, Usage
from introspection_cli.formats import Format
from introspection_cli.reporting.assemble import build_report
from introspection_cli.reporting.formatting import REASONING_LIMIT, clean
from introspection_cli.reporting.registry import ReportKind, render
from introspection_cli.reporting.render_markdown import FOLD_AFTER, render_markdown
from introspection_cli.reporting.render_text import render_text

LONG_REASONING = "The assistant acknowledged the duplicate charge. " * 20


def report() -> dict[str, Any]:
    rows = (
        RowOutcome(1, "conv_a1", "dev", "pass", "fail", ("fail",), reasoning=LONG_REASONING),
        RowOutcome(2, "conv_a2", "dev", "pass", "pass", ("pass",), reasoning="Refund opened."),
        RowOutcome(4, "conv_a4", None, "not_applicable", "gated"),
        RowOutcome(5, "conv_a5", "test", "fail", "error", ("error",),
                   error="provider failed after 2 retries: HTTP 503"),
        RowOutcome(6, "conv_a6", "test", "pass", "not_applicable",
                   ("not_applicable", "not_applicable", "pass"), True,
                   "Not | a *billing* question, ask @octocat\x1b[2J"),
        RowOutcome(7, "conv_a7", "test", "pass", "gated"),
    )
    judge = JudgeRun("billing-request-handling", "openai", "gpt-5.6-luna", rows,
                     (RejectedRow(3, "fixture-hash-mismatch", "snapshot_hash does not match"),))
    # Three samples a row (conv_a6 is unstable), so the unstable column is shown.
    return build_report(EvalRun("path/to/recipe", (judge,), Usage(4, 30, 5120, 900), samples=3))


def lines_with(text: str, needle: str) -> list[str]:
    return [line for line in text.splitlines() if needle in line]


# --- text -------------------------------------------------------------------------------

def test_text_has_a_table_row_per_split_with_nulls_shown() -> None:
    text = render_text(report(), color=False)
    header, = (line for line in text.splitlines() if line.split()[:1] == ["split"])
    assert header.split() == ["split", "n", "judged", "gated", "errors", "unstable",
                              "agreement", "na_agreement", "kappa", "tpr", "tnr"]
    train, = (line for line in text.splitlines() if line.split()[:1] == ["train"])
    assert train.split() == ["train", "0", "0", "0", "0", "0", "—", "—", "—", "—", "—"]
    scored, = (line for line in text.splitlines() if line.split()[:1] == ["scored"])
    # 6 rows: 3 judged, 2 gated, 1 error, 1 unstable. Applicable agreement: of the 4
    # non-error rows labelled pass or fail only a2 agrees; na_agreement: a4 of 1.
    assert scored.split()[:6] == ["scored", "6", "3", "2", "1", "1"]
    assert scored.split()[6:8] == ["0.250", "(0.046–0.699)"]
    assert scored.split()[8] == "1.000"
    # What "scored" holds, said under the table.
    assert "  scored: every evaluated row (dev 2, test 3, unsplit 1)" in text.splitlines()


def test_text_lists_confusion_rejected_disagreements_errors_and_usage() -> None:
    text = render_text(report(), color=False)
    assert "judge billing-request-handling (openai/gpt-5.6-luna)" in text
    pass_row, = (line for line in text.splitlines() if line.split()[:1] == ["pass"])
    # expected pass: outcomes pass 1, fail 1, not_applicable 1, gated 1, error 0
    assert pass_row.split() == ["pass", "1", "1", "1", "1", "0"]
    assert "line 3: [fixture-hash-mismatch] snapshot_hash does not match" in text
    assert "line 1 conv_a1: expected pass, got fail" in text
    assert ("line 6 conv_a6: expected pass, got not_applicable "
            "(unstable: samples not_applicable, not_applicable, pass)") in text
    assert "line 7 conv_a7: expected pass, got gated" in text
    assert "line 5 conv_a5: expected fail, error: provider failed after 2 retries: HTTP 503" in text
    assert "conv_a2" not in text and "conv_a4" not in text  # agreements are not listed
    assert text.rstrip().endswith(
        "usage: 4 requests, 30 cache hits, 5120 input tokens, 900 output tokens")


def test_text_trims_long_reasoning_to_one_line() -> None:
    text = render_text(report(), color=False)
    reasoning, = lines_with(text, "acknowledged the duplicate")
    shown = reasoning.split("reasoning: ", 1)[1]
    assert len(shown) == REASONING_LIMIT and shown.endswith("…")


def test_text_has_no_escape_sequences_without_colour_and_some_with_it() -> None:
    plain = render_text(report(), color=False)
    assert "\x1b" not in plain  # the model's own escape sequence is stripped too
    coloured = render_text(report(), color=True)
    assert "\x1b[1mjudge billing-request-handling\x1b[0m" in coloured
    assert "\x1b[2J" not in coloured


def test_clean_flattens_whitespace_and_control_characters() -> None:
    assert clean("a\n\tb\x07c\x9b  d") == "a b c d"
    assert clean("abcdef", 4) == "abc…"
    assert clean("abcd", 4) == "abcd"


def test_text_without_judges_says_so() -> None:
    text = render_text(build_report(EvalRun("r", ())), color=False)
    assert "no judge was evaluated" in text


# --- markdown ---------------------------------------------------------------------------

def test_markdown_has_a_github_table_per_judge() -> None:
    markdown = render_markdown(report())
    assert markdown.startswith("## Judge calibration: `path/to/recipe`")
    assert "### `billing-request-handling` (`openai/gpt-5.6-luna`)" in markdown
    assert ("| split | n | judged | gated | errors | unstable | agreement | na_agreement | kappa "
            "| tpr | tnr |" in markdown)
    assert "| train | 0 | 0 | 0 | 0 | 0 | — | — | — | — | — |" in markdown
    assert "scored: every evaluated row (dev 2, test 3, unsplit 1)." in markdown
    assert "Confusion on split `scored`" in markdown
    assert "| expected | pass | fail | not_applicable | gated | error |" in markdown
    assert "| pass | 1 | 1 | 1 | 1 | 0 |" in markdown
    for line in markdown.splitlines():
        if line.startswith("|"):
            assert line.endswith("|")


def test_markdown_lists_disagreements_with_untrusted_text_escaped() -> None:
    markdown = render_markdown(report())
    row, = lines_with(markdown, "conv_a6")
    # Five columns: the pipe inside the reasoning is escaped, not a column break.
    assert row.replace("\\|", "").count("|") == 6
    assert "Not \\| a *billing* question" in row
    assert "@octocat" not in row and "&#64;octocat" in row  # no GitHub mention notifications
    assert "\x1b" not in markdown
    assert "| 5 | conv_a5 | fail | provider failed after 2 retries: HTTP 503 |" in markdown
    assert "| 3 | `fixture-hash-mismatch` | snapshot_hash does not match |" in markdown
    assert ("Usage: 4 requests, 30 cache hits, 5120 input tokens, 900 output tokens."
            in markdown)


def test_markdown_folds_long_lists() -> None:
    many = tuple(RowOutcome(i, f"c{i}", "dev", "pass", "fail") for i in range(1, FOLD_AFTER + 2))
    folded = render_markdown(build_report(EvalRun("r", (JudgeRun("j", "openai", "m", many),))))
    assert f"<details><summary>Disagreements ({FOLD_AFTER + 1})</summary>" in folded
    short = render_markdown(report())
    assert "<details>" not in short and "**Disagreements** (3)" in short


def test_render_report_dispatches_to_text_and_markdown() -> None:
    data = report()
    assert render(ReportKind.EVAL, Format.TEXT, data) == render_text(data, color=False)
    assert render(ReportKind.EVAL, Format.TEXT, data, color=True) == render_text(data, color=True)
    assert render(ReportKind.EVAL, Format.MARKDOWN, data) == render_markdown(data)


def test_bidi_overrides_are_stripped_from_untrusted_text() -> None:
    # U+202E (right-to-left override) would make "liaf" display as "fail".
    assert clean("pass\u202eliaf\u2066x\u2069") == "pass liaf x"


# --- unstable: a column only when rows had several samples ------------------------------

def _one_sample_report(samples: int) -> dict[str, Any]:
    rows = tuple(RowOutcome(i, f"c{i}", "dev", "pass", "pass", ("pass",) * samples)
                 for i in range(1, 4))
    return build_report(EvalRun("r", (JudgeRun("j", "openai", "m", rows),), samples=samples))


def test_the_unstable_column_appears_only_with_several_samples() -> None:
    """With one sample per row no row can be unstable: a column of zeros says nothing."""
    from introspection_cli.reporting.render_html import render_html

    single, several = _one_sample_report(1), _one_sample_report(3)
    assert single["samples"] == 1 and several["samples"] == 3
    # The JSON keeps the count either way (documented as meaningful with --samples > 1).
    assert single["judges"][0]["splits"]["dev"]["unstable"] == 0
    for render_one in (lambda r: render_text(r, color=False), render_markdown, render_html):
        assert "unstable" not in render_one(single)
        assert "unstable" in render_one(several)


# --- a bound at the end of the scale is marked ------------------------------------------

def _eight_of_eight() -> dict[str, Any]:
    rows = (*(RowOutcome(i, f"c{i}", "dev", "pass", "pass", ("pass",)) for i in range(1, 9)),
            *(RowOutcome(i, f"c{i}", "dev", "fail", "fail" if i < 12 else "pass", ("fail",))
              for i in range(9, 13)))
    return build_report(EvalRun("r", (JudgeRun("j", "openai", "m", rows),)))


def test_a_bound_at_the_end_of_the_scale_is_marked_as_a_limit() -> None:
    """8 of 8 is 1.000 (0.676–1.000): the upper 1.000 is where the interval stops, not a
    measurement, and the reports say so; 3 of 4 (0.301–0.954) has nothing to mark."""
    from introspection_cli.reporting.render_html import render_html

    report = _eight_of_eight()
    text = render_text(report, color=False)
    dev, = (line for line in text.splitlines() if line.split()[:1] == ["dev"])
    assert "1.000 (0.676–1.000†)" in dev  # tpr
    assert "0.750 (0.301–0.954)" in dev  # tnr: no mark
    assert ("  † a bound at the end of the scale (0 or 1, to three decimals): where the "
            "interval stops, not a measured value") in text.splitlines()
    markdown = render_markdown(report)
    assert "| 1.000 (0.676–1.000†) |" in markdown and "† a bound at the end" in markdown
    page = render_html(report)
    assert "0.676–1.000†" in page and "† a bound at the end of the scale" in page
    unmarked = build_report(EvalRun("r", (JudgeRun("j", "openai", "m", tuple(
        RowOutcome(i, f"c{i}", "dev", "pass", "pass" if i % 2 else "fail") for i in range(4))),)))
    assert "†" not in render_text(unmarked, color=False) + render_markdown(unmarked)
