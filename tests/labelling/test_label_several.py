"""`judges label --judge A --judge B` from the command line: the browser app labels both in
one pass; the modes that write one file (--set, --from, --to-csv) refuse several judges
(exit 2), as does a pair of judges sharing one file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from tests.labelling.browser.harness import LabelApp
from tests.labelling.recipes import GATED_JUDGE, UNGATED_JUDGE, calibration, row, write_recipe

Cli = Callable[..., CompletedProcess[str]]
BOTH = ["--judge", "billing", "--judge", "helpful"]


def _recipe(root: Path) -> Path:
    return write_recipe(root, {"billing": (GATED_JUDGE, [row("c1", "refund"), row("c2")]),
                               "helpful": (UNGATED_JUDGE, [row("c2"), row("c3")])})


@pytest.mark.parametrize(("mode", "flag"), [
    (["--set", "1=pass"], "--set"), (["--from", "{tmp}/sheet.csv"], "--from"),
    (["--to-csv", "{tmp}/out.csv"], "--to-csv")])
def test_one_file_modes_refuse_several_judges(tmp_path: Path, cli: Cli, mode: list[str],
                                              flag: str) -> None:
    recipe = _recipe(tmp_path / "r")
    (tmp_path / "sheet.csv").write_text("conversation_id,expected\nc1,pass\n")
    before = {name: calibration(recipe, name).read_bytes() for name in ("billing", "helpful")}
    result = cli(["judges", "label", str(recipe), *BOTH,
                  *(part.format(tmp=tmp_path) for part in mode)])
    assert result.returncode == 2, result.stderr
    assert f"{flag} works on one judge's file; pass one --judge" in result.stderr
    assert "Traceback" not in result.stderr
    assert {name: calibration(recipe, name).read_bytes() for name in before} == before
    assert not (tmp_path / "out.csv").exists()


def test_without_judge_several_files_name_both_ways(tmp_path: Path, cli: Cli) -> None:
    result = cli(["judges", "label", str(_recipe(tmp_path / "r")), "--no-open"])
    assert result.returncode == 2
    assert "choose one with --judge NAME, or several with --judge A --judge B" in result.stderr


def test_judges_sharing_one_file_are_refused(tmp_path: Path, cli: Cli) -> None:
    recipe = _recipe(tmp_path / "r")
    helpful = calibration(recipe, "helpful")
    helpful.unlink()
    helpful.symlink_to("billing.calibration.jsonl")
    result = cli(["judges", "label", str(recipe), *BOTH, "--no-open"])
    assert result.returncode == 2
    assert "judges billing and helpful share one calibration file" in result.stderr


def test_the_app_labels_several_judges_and_says_so(tmp_path: Path) -> None:
    recipe = _recipe(tmp_path / "r")
    app = LabelApp.start(recipe, *BOTH)
    try:
        assert app.startup[0].startswith("Labelling judges billing, helpful in one pass: "
                                         "3 conversation(s) in the queue")
        assert app.label(2, "helpful", expected="pass").status == 200  # c3
        assert app.label(1, "helpful", expected="fail").status == 200  # c2
    finally:
        code, out, _ = app.stop()
    assert code == 0
    # The line after the address may or may not have been read with it: the last line
    # is what stopping printed.
    assert out.splitlines()[-1].startswith(f"Stopped. 2 write(s) this session, each saved to "
                                             f"{calibration(recipe, 'billing')}, "
                                             f"{calibration(recipe, 'helpful')}")
    assert b'"expected": null' in calibration(recipe, "billing").read_bytes().split(b"\n")[1]


def test_a_judge_named_twice_is_labelled_once(tmp_path: Path) -> None:
    app = LabelApp.start(_recipe(tmp_path / "r"), "--judge", "helpful", "--judge", "helpful")
    try:
        assert app.startup[0].startswith("Labelling judge helpful: 2 row(s) in the queue")
    finally:
        app.kill()
