"""``--baseline``: loading a previous report, deltas, changed rows, McNemar, rendering."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from introspection_cli.errors import DataError, ExitCode, UsageError
from introspection_cli.evaluation.outcomes import SPLITS, EvalRun, JudgeRun, RowOutcome
from introspection_cli.reporting.baseline import compare_with_baseline, load_baseline
from introspection_cli.reporting.formats import render_report
from introspection_cli.reporting.model import build_report, write_report
from introspection_cli.reporting.render_markdown import render_markdown
from introspection_cli.reporting.render_text import render_comparison_text


def make_report(outcomes: dict[str, tuple[str, str]], *, name: str = "billing",
                model: str = "gpt-a", extra_judges: tuple[str, ...] = ()) -> dict[str, Any]:
    """A report whose rows are {conversation_id: (expected, outcome)}, all in split dev."""
    rows = tuple(RowOutcome(line, cid, "dev", expected, outcome,  # type: ignore[arg-type]
                            error="boom" if outcome == "error" else None)
                 for line, (cid, (expected, outcome)) in enumerate(outcomes.items(), start=1))
    judges = (JudgeRun(name, "openai", model, rows),
              *(JudgeRun(other, "openai", model, ()) for other in extra_judges))
    return build_report(EvalRun("recipe", judges))


BEFORE = {"c1": ("pass", "pass"), "c2": ("pass", "fail"), "c3": ("fail", "fail"),
          "c4": ("fail", "pass"), "c5": ("not_applicable", "pass"), "c6": ("pass", "error"),
          "c7": ("fail", "fail"), "gone": ("pass", "pass")}
AFTER = {"c1": ("pass", "pass"), "c2": ("pass", "pass"), "c3": ("fail", "fail"),
         "c4": ("fail", "fail"), "c5": ("not_applicable", "gated"), "c6": ("pass", "fail"),
         "c7": ("pass", "fail"), "new": ("fail", "fail")}


# --- load_baseline ----------------------------------------------------------------------

def test_load_baseline_reads_a_written_report(tmp_path: Path) -> None:
    report = make_report(BEFORE)
    path = tmp_path / "baseline.json"
    write_report(path, report)
    assert load_baseline(path) == report


def test_missing_baseline_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist") as info:
        load_baseline(tmp_path / "nope.json")
    assert info.value.exit_code == ExitCode.USAGE
    assert "--output FILE" in str(info.value)


def test_directory_as_baseline_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read baseline"):
        load_baseline(tmp_path)


@pytest.mark.parametrize(("content", "message"), [
    (b"\xff\xfe not utf-8", "not UTF-8"),
    (b"{\"report_version\": 1,", "not valid JSON"),
    (b"[1, 2]", "not an eval report"),
    (b"{\"diagnostics\": []}", "not an eval report"),
    (b"{\"report_version\": 2}", "report_version 2; this introspection reads version 1"),
    (b"{\"report_version\": true}", "report_version true"),
    (b"{\"report_version\": 1, \"recipe\": \"r\", \"judges\": [], \"usage\": "
     b"{\"requests\": NaN, \"cached\": 0, \"input_tokens\": 0, \"output_tokens\": 0}}",
     "not valid JSON"),
    (b"{\"report_version\": 1, \"recipe\": \"r\", \"judges\": []}",
     "not a valid eval report: at \\$: 'usage' is a required property"),
])
def test_broken_baseline_is_a_data_error_naming_the_file(tmp_path: Path, content: bytes,
                                                          message: str) -> None:
    path = tmp_path / "old.json"
    path.write_bytes(content)
    with pytest.raises(DataError, match=message) as info:
        load_baseline(path)
    assert info.value.exit_code == ExitCode.PROBLEMS
    assert str(path) in str(info.value)


def test_schema_error_names_the_json_path(tmp_path: Path) -> None:
    report = make_report(BEFORE)
    report["judges"][0]["splits"]["dev"]["kappa"] = "high"
    path = tmp_path / "old.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    with pytest.raises(DataError, match=r"\$\.judges\[0\]\.splits\.dev\.kappa"):
        load_baseline(path)


# --- compare_with_baseline --------------------------------------------------------------

def test_deltas_per_split() -> None:
    comparison = compare_with_baseline(make_report(AFTER), make_report(BEFORE))
    (judge,) = comparison.judges
    assert [split.split for split in judge.splits] == list(SPLITS)
    dev = judge.splits[1]
    assert (dev.n_before, dev.n_after) == (8, 8)
    agreement = dev.statistics[0]
    # before: 7 scored (c6 error), agreeing c1 c3 c7 gone = 4/7.
    # after: 8 scored, agreeing c1 c2 c3 c4 c5 new = 6/8.
    assert agreement.statistic == "agreement"
    assert agreement.before == pytest.approx(4 / 7)
    assert agreement.after == pytest.approx(6 / 8)
    assert agreement.delta == pytest.approx(6 / 8 - 4 / 7)
    train = judge.splits[0]
    assert all(delta.before is None and delta.after is None and delta.delta is None
               for delta in train.statistics)


def test_changed_rows_are_matched_by_conversation_id() -> None:
    (judge,) = compare_with_baseline(make_report(AFTER), make_report(BEFORE)).judges
    changed = {row.conversation_id: row for row in judge.changed}
    assert set(changed) == {"c2", "c4", "c5", "c6", "c7"}
    assert (changed["c2"].before, changed["c2"].after) == ("fail", "pass")
    assert (changed["c5"].before, changed["c5"].after) == ("pass", "gated")
    assert (changed["c6"].before, changed["c6"].after) == ("error", "fail")
    assert changed["c7"].relabelled and changed["c7"].expected_before == "fail"
    assert not changed["c2"].relabelled
    assert [row.line for row in judge.changed] == sorted(row.line for row in judge.changed)
    assert (judge.only_in_baseline, judge.only_in_current) == (1, 1)


def test_mcnemar_pairs_only_rows_scored_in_both_runs_with_the_same_label() -> None:
    (judge,) = compare_with_baseline(make_report(AFTER), make_report(BEFORE)).judges
    # Paired: c1..c5 (c6 is an error before, c7 was relabelled, gone/new are unpaired).
    # Improved (wrong before, right now): c2, c4, c5. Regressed: none.
    assert (judge.mcnemar.paired, judge.mcnemar.improved, judge.mcnemar.regressed) == (5, 3, 0)
    # Exact two-sided: 2 · C(3,0) / 2³ = 0.25.
    assert judge.mcnemar.p_value == pytest.approx(0.25)


def test_identical_reports_have_no_changes_and_p_one() -> None:
    report = make_report(BEFORE)
    (judge,) = compare_with_baseline(report, report).judges
    assert judge.changed == ()
    assert judge.mcnemar.p_value == 1.0
    assert all(delta.delta in (0.0, None) for split in judge.splits
               for delta in split.statistics)


def test_judges_present_on_one_side_only_are_named() -> None:
    comparison = compare_with_baseline(make_report(AFTER, extra_judges=("tone",)),
                                       make_report(BEFORE, extra_judges=("legacy",)))
    assert comparison.judges_only_in_baseline == ("legacy",)
    assert comparison.judges_only_in_current == ("tone",)
    assert [judge.name for judge in comparison.judges] == ["billing"]


# --- rendering --------------------------------------------------------------------------

def test_comparison_text_shows_deltas_changed_rows_and_p_value() -> None:
    comparison = compare_with_baseline(make_report(AFTER, model="gpt-b"), make_report(BEFORE))
    text = render_comparison_text(comparison, color=False)
    assert "judge billing (model openai/gpt-a → openai/gpt-b)" in text
    dev, = (line for line in text.splitlines() if line.split()[:1] == ["dev"])
    assert "8 → 8" in dev and "0.571 → 0.750 (+0.179)" in dev
    assert ("McNemar exact test over 5 paired rows: 3 now agree, 0 no longer agree, "
            "p = 0.25 (could be chance)") in text
    assert "line 7 c7: expected fail → pass, fail → fail" in text
    assert "rows only in the baseline: 1; only in this run: 1" in text
    assert "\x1b" not in text


def test_comparison_goes_into_text_and_markdown_reports() -> None:
    after, before = make_report(AFTER), make_report(BEFORE)
    comparison = compare_with_baseline(after, before)
    text = render_report(after, "text", comparison=comparison)
    assert "compared with baseline" in text
    markdown = render_markdown(after, comparison=comparison)
    assert "### Compared with baseline" in markdown
    assert "| dev | 8 → 8 | 0.571 → 0.750 (+0.179) |" in markdown
    assert "| 2 | c2 | pass | fail | pass |" in markdown
    # The JSON report stays exactly SPEC §3.2: no comparison inside it.
    assert json.loads(render_report(after, "json", comparison=comparison)) == after


def test_significant_change_is_called_unlikely_to_be_chance() -> None:
    before = {f"c{i}": ("pass", "fail") for i in range(8)}
    after = {f"c{i}": ("pass", "pass") for i in range(8)}
    (judge,) = compare_with_baseline(make_report(after), make_report(before)).judges
    # 8 improved, 0 regressed: p = 2 / 2^8 = 0.0078125.
    assert judge.mcnemar.p_value == pytest.approx(2 / 256)
    text = render_comparison_text(compare_with_baseline(make_report(after), make_report(before)))
    assert "p = 0.00781 (unlikely to be chance)" in text
