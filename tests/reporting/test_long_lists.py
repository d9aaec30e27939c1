"""A long run's text and Markdown reports list the first rows and say where the rest are.

A synthetic 5,000-row report built from outcomes (no model call): 506
disagreements and 35 errors for one judge, 3 disagreements for another. The text
and Markdown reports list the first :data:`LISTED_ROWS` disagreements of each judge
and, apart, its first :data:`LISTED_ROWS` errors, each followed by one line
saying how many more there are and where to see them; the JSON report keeps
every row.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from introspection_cli.evaluation.outcomes import EvalRun, JudgeRun, RowOutcome, Usage
from introspection_cli.formats import Format
from introspection_cli.reporting.assemble import build_report
from introspection_cli.reporting.formatting import LISTED_ROWS
from introspection_cli.reporting.registry import ReportKind, render
from introspection_cli.reporting.sentences import disagrees

ROWS = 5000
DISAGREEING = 506
ERRORS = 35


def _outcome(line: int, disagreeing: int) -> RowOutcome:
    """Every ninth row disagrees (``disagreeing`` of them, lines 9 to 4,554 at most), and
    the 35 rows from line 4,601 on are errors."""
    if 4601 <= line < 4601 + ERRORS:
        return RowOutcome(line, f"conv_{line}", "dev", "fail", "error", ("error",),
                          error=f"provider failed on row {line}: HTTP 503")
    if line % 9 == 0 and line // 9 <= disagreeing:
        return RowOutcome(line, f"conv_{line}", "dev", "pass", "fail", ("fail",),
                          reasoning=f"reasoning for row {line}")
    return RowOutcome(line, f"conv_{line}", "dev", "pass", "pass", ("pass",), reasoning="ok")


def _report(*, disagreeing: int = DISAGREEING) -> dict[str, Any]:
    rows = tuple(_outcome(line, disagreeing) for line in range(1, ROWS + 1))
    small = tuple(RowOutcome(n, f"other_{n}", "dev", "fail", "pass", ("pass",), reasoning="r")
                  for n in range(1, 4))
    return build_report(EvalRun("recipe", (
        JudgeRun("billing", "openai", "gpt-x", rows),
        JudgeRun("refunds", "openai", "gpt-x", small)), Usage()))


def _section(text: str, title: str, judge: str) -> list[str]:
    """The lines of one judge's ``title (N)`` list in the text report."""
    lines = text.split(f"judge {judge} ", 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"  {title} ("))
    end = next((i for i, line in enumerate(lines[start + 1:], start + 1)
                if not line.startswith("    ")), len(lines))
    return lines[start:end]


def test_the_report_has_the_rows_the_tests_expect() -> None:
    judge = _report()["judges"][0]
    assert len(judge["rows"]) == ROWS
    assert sum(disagrees(row["expected"], row["outcome"]) for row in judge["rows"]) == DISAGREEING
    assert sum(row["outcome"] == "error" for row in judge["rows"]) == ERRORS


def test_text_lists_the_first_disagreements_and_says_how_many_more_and_where() -> None:
    text = render(ReportKind.EVAL, Format.TEXT, _report())
    section = _section(text, "disagreements", "billing")
    assert section[0] == f"  disagreements ({DISAGREEING})"
    listed = [line for line in section if re.match(r"    line \d+ ", line)]
    assert LISTED_ROWS == 20
    assert [int(line.split()[1]) for line in listed] == [9 * n for n in range(1, 21)]
    more = section[-1]
    assert more == (f"    … {DISAGREEING - 20} more disagreements not listed: see --html FILE "
                    "or --format json (--output REPORT.json); review them with introspection "
                    "judges label --judge billing --review REPORT.json")
    assert len(section) == 1 + 2 * 20 + 1  # the title, each row and its reasoning, the note
    # Every row listed, the report was 1,094 lines long.
    assert len(text.splitlines()) < 120


def test_errors_have_their_own_cap_and_line() -> None:
    section = _section(render(ReportKind.EVAL, Format.TEXT, _report()), "errors", "billing")
    assert section[0] == f"  errors ({ERRORS})"
    assert len([line for line in section if line.startswith("    line ")]) == 20
    assert section[-1] == (f"    … {ERRORS - 20} more errors not listed: see --html FILE or "
                           "--format json (--output REPORT.json)")


@pytest.mark.parametrize(("count", "more"), [(20, None), (21, 1)])
def test_the_line_appears_only_when_rows_are_left_out(count: int, more: int | None) -> None:
    section = _section(render(ReportKind.EVAL, Format.TEXT, _report(disagreeing=count)), "disagreements",
                       "billing")
    listed = [line for line in section if line.startswith("    line ")]
    assert len(listed) == 20
    assert section[-1].startswith(f"    … {more} more") if more else "more" not in section[-1]


def test_a_short_list_is_listed_whole() -> None:
    section = _section(render(ReportKind.EVAL, Format.TEXT, _report()), "disagreements", "refunds")
    assert section[0] == "  disagreements (3)"
    assert [line.split()[2] for line in section if line.startswith("    line ")] == [
        "other_1:", "other_2:", "other_3:"]
    assert not any("more" in line for line in section)


def test_markdown_lists_as_many_and_says_where_the_rest_are() -> None:
    markdown = render(ReportKind.EVAL, Format.MARKDOWN, _report())
    billing = markdown.split("### `billing`", 1)[1].split("### `refunds`", 1)[0]
    rows = re.findall(r"^\| (\d+) \| conv_\d+ \| pass \| fail \|", billing, re.M)
    assert len(rows) == 20 and rows[0] == "9"
    assert (f"… {DISAGREEING - 20} more disagreements not listed: see `--html FILE` or "
            "`--format json` (`--output REPORT.json`); review them with `introspection judges "
            "label --judge billing --review REPORT.json`") in billing
    assert len(re.findall(r"^\| \d+ \| conv_\d+ \| fail \| provider failed", billing, re.M)) == 20
    assert f"… {ERRORS - 20} more errors not listed" in billing
    # The summary still counts every row.
    assert f"<summary>Disagreements ({DISAGREEING})</summary>" in billing


def test_json_keeps_every_row() -> None:
    report = json.loads(render(ReportKind.EVAL, Format.JSON, _report()))
    rows = report["judges"][0]["rows"]
    assert len(rows) == ROWS
    assert sum(disagrees(row["expected"], row["outcome"]) for row in rows) == DISAGREEING
