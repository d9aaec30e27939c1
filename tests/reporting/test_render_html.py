"""The HTML report's source: escaping, the embedded conversations and what is left out.

What the page does in a browser is tested in tests/reporting/browser.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from introspection_cli.evaluation.outcomes import EvalRun, JudgeRun, RowOutcome, Usage
from introspection_cli.evaluation.plan import load_valid_recipe
from introspection_cli.reporting import render_html as page
from introspection_cli.reporting.assemble import build_report
from introspection_cli.reporting.report import EvalReport
from introspection_cli.workflows.transcripts import shown_transcripts
from tests.evaluation.conftest import UNGATED_JUDGE, fixture_row, write_recipe

HOSTILE = "</script><script>alert(1)</script><!-- <img src=x onerror=alert(2)> \x1b[2J\u202e"


def _report(rows: tuple[RowOutcome, ...]) -> dict[str, Any]:
    return build_report(EvalRun("recipe</title><script>", (
        JudgeRun("helpful", "openai", "gpt-x", rows),), Usage()))


def _embedded(source: str) -> dict[str, Any]:
    data = source.split('<script type="application/json" id="report-data">')[1]
    return json.loads(data.split("</script>")[0])  # type: ignore[no-any-return]


def test_untrusted_text_is_escaped_and_only_listed_scripts_exist() -> None:
    rows = (RowOutcome(1, "conv" + HOSTILE, "dev", "pass", "fail", ("fail",),
                       reasoning=HOSTILE + "\nsecond line"),
            RowOutcome(2, "conv_2", "dev", "fail", "error", ("error",), error=HOSTILE))
    source = page.render_html(_report(rows), transcripts={"helpful": {
        1: [{"type": "message", "role": "user", "text": HOSTILE}]}})
    assert source.count("<script") == 3 and source.count("</script>") == 3
    assert "<img" not in source and "<!--" not in source
    markup = source.split('<script type="application/json"')[0]
    assert "\x1b" not in markup and "\u202e" not in markup  # the data keeps them, as data
    assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in source
    assert "\nsecond line</div>" in source  # the reasoning keeps its line breaks
    assert "<title>Judge calibration: recipe&lt;/title&gt;&lt;script&gt;</title>" in source
    # The conversation is data, given back exactly by JSON.parse.
    assert _embedded(source) == {"transcripts": {"0:1": [
        {"type": "message", "role": "user", "text": HOSTILE}]}}


def test_rows_say_why_their_conversation_is_not_in_the_page(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(page, "TRANSCRIPT_LIMIT", 2)
    rows = tuple(RowOutcome(n, f"conv_{n}", "dev", "pass", "fail", ("fail",), reasoning="no")
                 for n in range(1, 5))
    events = {n: [{"type": "message", "role": "user", "text": f"row {n}"}] for n in (1, 2, 3)}
    source = page.render_html(_report(rows), transcripts={"helpful": events})
    assert sorted(_embedded(source)["transcripts"]) == ["0:1", "0:2"]
    missing = dict(re.findall(r'data-key="0:(\d)" data-missing="([^"]*)"', source))
    assert missing["3"].startswith("The page embeds the conversations of the first 2 rows")
    assert missing["4"] == ("The conversation is not in this report: its calibration row "
                            "changed after the run.")


def test_conversations_are_read_back_only_for_rows_that_did_not_change(tmp_path: Path) -> None:
    rows = [fixture_row(f"conv_{n}", f"text {n}", expected="pass", split="dev")
            for n in range(1, 4)]
    recipe_dir = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, rows)})
    recipe, _ = load_valid_recipe(recipe_dir, ())
    report = _report(tuple(
        RowOutcome(n, f"conv_{n}", "dev", "pass", outcome, (outcome,), reasoning="r")
        for n, outcome in ((1, "fail"), (2, "pass"), (3, "fail"))))
    report["judges"][0]["rows"][2]["conversation_id"] = "conv_elsewhere"  # line 3 changed
    found = shown_transcripts(recipe, EvalReport.from_json(report))
    # Line 2 agrees (not shown); line 3 now holds another conversation.
    assert list(found["helpful"]) == [1]
    assert found["helpful"][1][0]["text"] == "text 1"
