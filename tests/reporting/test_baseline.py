"""``--baseline``: loading a previous report, deltas, changed rows, McNemar, rendering."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from introspection_cli.errors import DataError, ExitCode, UsageError
from introspection_cli.evaluation.outcomes import EvalRun, JudgeRun, RowOutcome
from introspection_cli.formats import Format
from introspection_cli.reporting.assemble import build_report
from introspection_cli.reporting.baseline import compare_with_baseline, load_baseline
from introspection_cli.reporting.metrics import REPORT_SPLITS
from introspection_cli.reporting.model import write_report
from introspection_cli.reporting.registry import ReportKind, render
from introspection_cli.reporting.render_markdown import render_markdown
from introspection_cli.reporting.render_text import render_comparison_text


def make_report(outcomes: dict[str, tuple[str, str]], *, name: str = "billing",
                model: str = "gpt-a", extra_judges: tuple[str, ...] = (),
                splits: dict[str, str | None] | None = None) -> dict[str, Any]:
    """A report whose rows are {conversation_id: (expected, outcome)}, in split dev unless
    ``splits`` says otherwise."""
    splits = splits or {}
    rows = tuple(RowOutcome(line, cid, splits.get(cid, "dev"), expected,  # type: ignore[arg-type]
                            outcome, error="boom" if outcome == "error" else None)
                 for line, (cid, (expected, outcome)) in enumerate(outcomes.items(), start=1))
    judges = (JudgeRun(name, "openai", model, rows, fingerprint=FINGERPRINT),
              *(JudgeRun(other, "openai", model, (), fingerprint=FINGERPRINT)
                for other in extra_judges))
    return build_report(EvalRun("recipe", judges))


FINGERPRINT = "sha256:" + "0" * 64


def as_version_1(report: dict[str, Any]) -> dict[str, Any]:
    """The same report as the first published layout wrote it (no provenance, fingerprint,
    precision, gates or batch count; every split evaluated)."""
    old = {key: value for key, value in report.items()
           if key not in ("tool_version", "created_at", "git", "gates", "samples")}
    old["report_version"] = 1
    old["usage"] = {key: value for key, value in report["usage"].items()
                    if key in ("requests", "cached", "input_tokens", "output_tokens")}
    old["judges"] = [{key: value for key, value in judge.items() if key != "fingerprint"}
                     for judge in report["judges"]]
    for judge in old["judges"]:
        judge["splits"] = {split: {k: v for k, v in stats.items()
                                   if k not in ("precision", "na_agreement")}
                           for split, stats in judge["splits"].items() if split != "scored"}
    return old


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
    assert load_baseline(path).as_json() == report


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
    (b"{\"report_version\": 4}", "report_version 4; this introspection reads versions 1, 2 and 3"),
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


def test_an_inverted_interval_in_a_baseline_is_a_data_error(tmp_path: Path) -> None:
    # The schema cannot say low <= value <= high; reading the report into its value does.
    report = make_report(BEFORE)
    report["judges"][0]["splits"]["dev"]["agreement"] = {"value": 0.2, "low": 0.5, "high": 0.9}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    with pytest.raises(DataError, match="not a valid eval report: an interval needs") as info:
        load_baseline(path)
    assert str(path) in str(info.value)


# --- compare_with_baseline --------------------------------------------------------------

def test_deltas_per_split() -> None:
    comparison = compare_with_baseline(make_report(AFTER), make_report(BEFORE))
    (judge,) = comparison.judges
    assert [split.split for split in judge.splits] == list(REPORT_SPLITS)
    dev = judge.splits[1]
    # c1..c7 are in both reports; "gone" only in the baseline, "new" only in this run.
    assert (dev.paired, dev.only_in_baseline, dev.only_in_current) == (7, 1, 1)
    agreement = dev.statistics[0]
    # Applicable agreement over the paired rows labelled pass or fail. Before: 5 scored
    # (c6 an error, c5 labelled not_applicable), agreeing c1 c3 c7 = 3/5.
    # After: 6 scored, agreeing c1 c2 c3 c4 = 4/6.
    assert agreement.statistic == "agreement"
    assert agreement.before == pytest.approx(3 / 5)
    assert agreement.after == pytest.approx(4 / 6)
    assert agreement.delta == pytest.approx(4 / 6 - 3 / 5)
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
    # Mid-p: 2·P(X < 0) + P(X = 0) = C(3,0) / 2³ = 0.125.
    assert judge.mcnemar.p_value == pytest.approx(0.125)


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
    assert dev.split()[1] == "7" and "0.600 → 0.667 (+0.067)" in dev
    assert ("all paired rows: 5 paired, 3 now agree, 0 no longer agree; McNemar mid-p = "
            "0.125, Holm-adjusted 0.375 (could be chance); change +0.600 (95% interval") in text
    assert "line 7 c7: expected fail → pass, fail → fail" in text
    assert ("rows not paired (2): 1 only in the baseline, 1 only in this run, 0 whose "
            "conversation text changed") in text
    assert "line 8 gone: only in the baseline (its line there)" in text
    assert "\x1b" not in text


def test_comparison_goes_into_text_and_markdown_reports() -> None:
    after, before = make_report(AFTER), make_report(BEFORE)
    comparison = compare_with_baseline(after, before)
    text = render(ReportKind.EVAL, Format.TEXT, after, comparison=comparison)
    assert "compared with baseline" in text
    markdown = render_markdown(after, comparison=comparison)
    assert "### Compared with baseline" in markdown
    assert "| dev | 7 | 0.600 → 0.667 (+0.067) |" in markdown
    assert "- line 8 new: only in this run" in markdown
    assert "| 2 | c2 | pass | fail | pass |" in markdown
    # The JSON report stays exactly SPEC §3.2: no comparison inside it.
    assert json.loads(render(ReportKind.EVAL, Format.JSON, after, comparison=comparison)) == after


def test_significant_change_is_called_unlikely_to_be_chance() -> None:
    before = {f"c{i}": ("pass", "fail") for i in range(8)}
    after = {f"c{i}": ("pass", "pass") for i in range(8)}
    (judge,) = compare_with_baseline(make_report(after), make_report(before)).judges
    # 8 improved, 0 regressed: mid-p = 1 / 2^8 = 0.00390625.
    assert judge.mcnemar.p_value == pytest.approx(1 / 256)
    text = render_comparison_text(compare_with_baseline(make_report(after), make_report(before)))
    assert "mid-p = 0.00391, Holm-adjusted 0.0117 (unlikely to be chance)" in text


# --- version 1 baselines, per-class tests, the paired interval, split changes -----------

def test_a_version_1_baseline_is_read_and_compared(tmp_path: Path) -> None:
    path = tmp_path / "v1.json"
    path.write_text(json.dumps(as_version_1(make_report(BEFORE))), encoding="utf-8")
    baseline = load_baseline(path)
    assert baseline.version == 1
    (judge,) = compare_with_baseline(make_report(AFTER), baseline).judges
    assert (judge.mcnemar.paired, judge.mcnemar.improved) == (5, 3)


def test_a_version_1_baseline_must_match_the_version_1_schema(tmp_path: Path) -> None:
    old = as_version_1(make_report(BEFORE))
    old["gates"] = []  # a version-2 field in a version-1 report
    path = tmp_path / "v1.json"
    path.write_text(json.dumps(old), encoding="utf-8")
    with pytest.raises(DataError, match="not a valid eval report"):
        load_baseline(path)


def test_tests_per_class_pair_only_rows_of_that_label() -> None:
    (judge,) = compare_with_baseline(make_report(AFTER), make_report(BEFORE)).judges
    overall, passes, fails = judge.tests
    assert (overall.scope, passes.scope, fails.scope) == ("all", "pass", "fail")
    # pass rows paired: c1 (right both), c2 (improved); fail rows: c3 (both), c4 (improved).
    assert (passes.paired, passes.improved, passes.regressed) == (2, 1, 0)
    assert (fails.paired, fails.improved, fails.regressed) == (2, 1, 0)
    assert passes.p_value == pytest.approx(0.5)  # one flip: P(X = 0) = 1/2
    assert passes.difference is not None and passes.difference.value == pytest.approx(0.5)


def test_the_paired_interval_is_newcombes_method_10_on_the_paired_table() -> None:
    # 36 right in both, 12 right only now, 2 right only before, 0 in neither: Newcombe
    # (1998) example (a), 0.0569 to 0.3404.
    before = {f"c{i}": ("pass", "pass") for i in range(36)}
    before |= {f"n{i}": ("pass", "fail") for i in range(12)}
    before |= {f"o{i}": ("pass", "pass") for i in range(2)}
    after = {cid: ("pass", "pass") for cid in before} | {f"o{i}": ("pass", "fail")
                                                          for i in range(2)}
    (judge,) = compare_with_baseline(make_report(after), make_report(before)).judges
    change = judge.mcnemar.difference
    assert change is not None
    assert (change.value, change.low, change.high) == pytest.approx((0.2, 0.0569, 0.3404),
                                                                    abs=5e-5)


def test_rows_whose_split_changed_are_listed() -> None:
    before = make_report(BEFORE, splits={"c3": "train", "c1": None})
    after = make_report(AFTER, splits={"c3": "test"})
    (judge,) = compare_with_baseline(after, before).judges
    assert [(r.conversation_id, r.before, r.after) for r in judge.split_changes] == [
        ("c1", None, "dev"), ("c3", "train", "test")]
    text = render_comparison_text(compare_with_baseline(after, before))
    assert "rows whose split changed (2)" in text
    assert "line 3 c3: train → test" in text and "line 1 c1: unsplit → dev" in text
    markdown = render_markdown(after, comparison=compare_with_baseline(after, before))
    assert "| 3 | c3 | train | test |" in markdown


def test_a_held_out_split_compares_as_held_out() -> None:
    before = as_version_1(make_report(BEFORE))
    after = make_report(AFTER)
    after["judges"][0]["splits"]["test"] = {"held_out": True, "n": 4}
    (judge,) = compare_with_baseline(after, before).judges
    test = next(split for split in judge.splits if split.split == "test")
    assert test.held_out == "in this run"
    assert all(delta.after is None for delta in test.statistics)
    assert "held out in this run" in render_comparison_text(compare_with_baseline(after, before))


# --- paired deltas, unpaired rows, Holm ---------------------------------------------------

def _agreeing(count: int, prefix: str, *, wrong: int = 0) -> dict[str, tuple[str, str]]:
    """``count`` rows labelled pass, the first ``wrong`` of them judged fail."""
    return {f"{prefix}{i}": ("pass", "fail" if i < wrong else "pass") for i in range(count)}


def test_deltas_use_only_rows_present_in_both_reports() -> None:
    """The audit's case: 23 rows in the baseline, the same 23 (same outcomes) and 12 new
    ones now. The delta folded the new rows in (18/23 → 30/35, "23 → 35 … +0.075") while
    the paired line said nothing changed. Over the rows in both reports nothing did."""
    before = _agreeing(23, "c", wrong=5)
    after = before | _agreeing(12, "new")
    comparison = compare_with_baseline(make_report(after), make_report(before))
    (judge,) = comparison.judges
    dev = next(split for split in judge.splits if split.split == "dev")
    assert (dev.paired, dev.only_in_baseline, dev.only_in_current) == (23, 0, 12)
    agreement = dev.statistics[0]
    assert agreement.statistic == "agreement"
    assert agreement.before == agreement.after == pytest.approx(18 / 23)
    assert agreement.delta == 0.0
    assert (judge.only_in_baseline, judge.only_in_current) == (0, 12)
    assert sorted(row.conversation_id for row in judge.unpaired) == sorted(
        f"new{i}" for i in range(12))
    assert all(row.where == "this run" for row in judge.unpaired)
    text = render_comparison_text(comparison)
    dev_line, = (line for line in text.splitlines() if line.split()[:1] == ["dev"])
    assert "+0.075" not in text and "0.783 → 0.783 (+0.000)" in dev_line
    assert dev_line.split()[1] == "23"
    assert "all paired rows: 23 paired, 0 now agree, 0 no longer agree" in text
    assert "rows not paired (12): 0 only in the baseline, 12 only in this run" in text
    assert "line 24 new0: only in this run" in text


def test_a_conversation_whose_text_changed_is_not_paired() -> None:
    before, after = make_report(BEFORE), make_report(AFTER)
    for report, digest in ((before, "1"), (after, "2")):
        row = next(r for r in report["judges"][0]["rows"] if r["conversation_id"] == "c2")
        row["snapshot_hash"] = "sha256:" + digest * 64
    (judge,) = compare_with_baseline(after, before).judges
    assert "c2" not in {row.conversation_id for row in judge.changed}
    (changed_text,) = (row for row in judge.unpaired if row.conversation_id == "c2")
    assert changed_text.where == "text changed"
    # c2 was the improved pass row: without it, c4 and c5 remain improved.
    assert (judge.mcnemar.paired, judge.mcnemar.improved) == (4, 2)
    assert "line 2 c2: its conversation text changed (snapshot_hash differs)" in (
        render_comparison_text(compare_with_baseline(after, before)))


def test_the_three_paired_tests_are_holm_adjusted() -> None:
    from statsmodels.stats.multitest import multipletests

    (judge,) = compare_with_baseline(make_report(AFTER), make_report(BEFORE)).judges
    raw = [test.p_value for test in judge.tests]
    assert raw == pytest.approx([0.125, 0.5, 0.5])
    assert [test.p_adjusted for test in judge.tests] == pytest.approx(
        list(multipletests(raw, method="holm")[1]))
    text = render_comparison_text(compare_with_baseline(make_report(AFTER),
                                                        make_report(BEFORE)))
    assert "McNemar mid-p = 0.125, Holm-adjusted 0.375 (could be chance)" in text


def test_a_change_only_raw_p_calls_significant_is_called_chance_after_holm() -> None:
    # 5 pass rows improved, none regressed: mid-p 1/32 = 0.031 on all rows and on the pass
    # rows; no fail row, p 1. Holm: 3 · 0.031 = 0.094.
    before = _agreeing(5, "c", wrong=5)
    after = _agreeing(5, "c")
    (judge,) = compare_with_baseline(make_report(after), make_report(before)).judges
    overall = judge.mcnemar
    assert overall.p_value == pytest.approx(1 / 32)
    assert overall.p_adjusted == pytest.approx(3 / 32)
    text = render_comparison_text(compare_with_baseline(make_report(after), make_report(before)))
    assert "McNemar mid-p = 0.0312, Holm-adjusted 0.0938 (could be chance)" in text


def test_a_change_interval_at_minus_or_plus_one_is_marked() -> None:
    # One row, wrong before and right now: change +1.000, its interval reaches +1.
    (judge,) = compare_with_baseline(make_report({"c": ("pass", "pass")}),
                                     make_report({"c": ("pass", "fail")})).judges
    assert judge.mcnemar.difference is not None and judge.mcnemar.difference.high == 1.0
    text = render_comparison_text(compare_with_baseline(make_report({"c": ("pass", "pass")}),
                                                        make_report({"c": ("pass", "fail")})))
    assert "to +1.000†)" in text
    assert "† a bound at the end of the scale" in text


def as_version_2(report: dict[str, Any]) -> dict[str, Any]:
    """The same report as version 2 wrote it: no samples, no scored split, no na_agreement,
    and its agreement counting gate hits (as the stored statistics then did)."""
    old = {key: value for key, value in report.items() if key != "samples"}
    old["report_version"] = 2
    old["judges"] = [dict(judge) for judge in report["judges"]]
    for judge in old["judges"]:
        judge["splits"] = {split: {k: v for k, v in stats.items() if k != "na_agreement"}
                           for split, stats in judge["splits"].items() if split != "scored"}
        judge["splits"]["dev"]["agreement"] = {"value": 0.99, "low": 0.9, "high": 1.0}
    for gate in old["gates"]:
        gate["split"] = "all"
    return old


def test_a_version_2_baseline_is_read_and_counted_like_this_run(tmp_path: Path) -> None:
    path = tmp_path / "v2.json"
    path.write_text(json.dumps(as_version_2(make_report(BEFORE))), encoding="utf-8")
    baseline = load_baseline(path)
    assert baseline.version == 2
    (judge,) = compare_with_baseline(make_report(AFTER), baseline).judges
    dev = next(split for split in judge.splits if split.split == "dev")
    # Recomputed from the rows: applicable agreement 3/5 before (not the stored 0.99).
    assert dev.statistics[0].before == pytest.approx(3 / 5)
    assert next(d for d in dev.statistics if d.statistic == "na_agreement").before == 0.0
