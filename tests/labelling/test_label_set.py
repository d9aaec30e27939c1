"""`judges label --set`: rows labelled from the command line, by the byte rule, all or nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

from tests.labelling.recipes import GATED_JUDGE, UNGATED_JUDGE, calibration, row, write_recipe

Cli = Callable[..., CompletedProcess[str]]


def _recipe(tmp_path: Path, rows: list[dict[str, object]] | None = None) -> Path:
    rows = rows or [row(f"c{n}") for n in range(1, 5)]
    return write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, rows)})


def test_set_changes_only_those_values(tmp_path: Path, cli: Cli) -> None:
    recipe = _recipe(tmp_path)
    before = calibration(recipe).read_bytes().split(b"\n")
    result = cli(["judges", "label", str(recipe), "--set", "1=pass", "--set", "3=fail:dev"])
    assert result.returncode == 0, result.stderr
    assert "line 1: expected pass" in result.stdout and "line 3: expected fail, split dev" \
        in result.stdout and "2 row(s) written" in result.stdout
    after = calibration(recipe).read_bytes().split(b"\n")
    assert after[0] == before[0].replace(b'"expected": null', b'"expected": "pass"')
    assert after[2] == before[2].replace(b'"expected": null, "split": null',
                                         b'"expected": "fail", "split": "dev"')
    assert [after[1], after[3], after[4]] == [before[1], before[3], before[4]]
    cleared = cli(["judges", "label", str(recipe), "--set", "3=fail:none"])
    assert cleared.returncode == 0
    assert json.loads(calibration(recipe).read_bytes().split(b"\n")[2])["split"] is None


def test_a_bad_assignment_is_a_usage_error_and_writes_nothing(tmp_path: Path, cli: Cli) -> None:
    recipe = _recipe(tmp_path)
    before = calibration(recipe).read_bytes()
    for bad, says in (("1=passed", "unknown label 'passed'"), ("x=pass", "LINE=LABEL"),
                      ("1=pass:holdout", "unknown split 'holdout'"), ("9=pass", "only 4 line"),
                      ("0=pass", "LINE=LABEL")):
        result = cli(["judges", "label", str(recipe), "--set", "1=fail", "--set", bad])
        assert result.returncode == 2 and says in result.stderr, (bad, result.stderr)
    assert calibration(recipe).read_bytes() == before


def test_a_rejected_row_is_never_written_and_nothing_else_is_either(tmp_path: Path,
                                                                    cli: Cli) -> None:
    tampered = row("c_bad")
    tampered["snapshot_hash"] = "sha256:" + "0" * 64
    recipe = _recipe(tmp_path, [row("c1"), tampered])
    before = calibration(recipe).read_bytes()
    result = cli(["judges", "label", str(recipe), "--set", "1=pass", "--set", "2=pass"])
    assert result.returncode == 1
    assert "line 2 cannot be labelled: [fixture-hash-mismatch]" in result.stderr
    assert calibration(recipe).read_bytes() == before


def test_the_judge_must_be_named_when_several_have_rows(tmp_path: Path, cli: Cli) -> None:
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, [row("c1")]),
                                           "billing": (GATED_JUDGE, [row("c2")])})
    result = cli(["judges", "label", str(recipe), "--set", "1=pass"])
    assert result.returncode == 2 and "choose one with --judge NAME" in result.stderr
    named = cli(["judges", "label", str(recipe), "--judge", "billing", "--set", "1=pass"])
    assert named.returncode == 0
    assert json.loads(calibration(recipe, "billing").read_text())["expected"] == "pass"
    assert json.loads(calibration(recipe, "helpful").read_text())["expected"] is None


def test_modes_cannot_be_combined(tmp_path: Path, cli: Cli) -> None:
    recipe = _recipe(tmp_path)
    both = cli(["judges", "label", str(recipe), "--set", "1=pass", "--to-csv",
                str(tmp_path / "s.csv")])
    assert both.returncode == 2 and "cannot be combined" in both.stderr
    stray = cli(["judges", "label", str(recipe), "--set", "1=pass", "--overwrite"])
    assert stray.returncode == 2 and "--overwrite only applies" in stray.stderr


def test_a_row_spread_over_lines_is_never_written_and_lines_keep_their_numbers(
        tmp_path: Path, cli: Cli) -> None:
    # An editor pretty-printed row 1 over several lines; row 2 is still one line.
    spread = json.dumps(row("c1"), indent=2)
    recipe = _recipe(tmp_path, [spread, row("c2")])  # type: ignore[list-item]
    before = calibration(recipe).read_bytes()
    lines = spread.count("\n") + 2
    result = cli(["judges", "label", str(recipe), "--set", "2=pass"])
    assert result.returncode == 1 and "cannot be labelled" in result.stderr
    assert calibration(recipe).read_bytes() == before
    assert cli(["judges", "label", str(recipe), "--set", f"{lines}=pass"]).returncode == 0
    assert json.loads(calibration(recipe).read_bytes().split(b"\n")[lines - 1])["expected"] \
        == "pass"
