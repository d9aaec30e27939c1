"""The sheet's rater and note columns: ``--to-csv --rater NAME`` is blind (that rater's
labels and notes only), ``--from`` records each rater row as that rater's annotation (a
sheet may hold several raters' rows for one conversation), and ``--rater`` on the command
line names the rater of rows whose rater cell is empty. Plus the --rater usage rules."""

from __future__ import annotations

import csv
import io
import subprocess
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from introspection_cli.annotations.file import read_annotations
from introspection_cli.annotations.location import annotations_path
from introspection_cli.labelling.commands import resolve_rater
from tests.labelling.recipes import UNGATED_JUDGE, calibration, row, rows_of, write_recipe

Cli = Callable[..., CompletedProcess[str]]


def _sheet(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))


def _write(path: Path, records: list[dict[str, str]]) -> None:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(records[0]), lineterminator="\r\n")
    writer.writeheader()
    writer.writerows(records)
    path.write_text(buffer.getvalue(), encoding="utf-8")


def _annotations(recipe: Path) -> dict[tuple[str, str], tuple[str, str | None]]:
    found = read_annotations(annotations_path(recipe / "judges", "helpful")).annotations
    return {(a.conversation_id, a.rater): (a.label, a.note) for a in found}


def _recipe(root: Path) -> Path:
    return write_recipe(root, {"helpful": (UNGATED_JUDGE, [row("c1"), row("c2"), row("c3")])})


def test_several_raters_round_trip_through_one_sheet(tmp_path: Path, cli: Cli) -> None:
    recipe = _recipe(tmp_path / "r")
    sheet = tmp_path / "labels.csv"
    _write(sheet, [
        {"conversation_id": "c1", "expected": "fail", "rater": "Ana", "note": "=not a formula"},
        {"conversation_id": "c1", "expected": "pass", "rater": "Ben", "note": ""},
        {"conversation_id": "c2", "expected": "pass", "rater": "", "note": ""},
        {"conversation_id": "c3", "expected": "pass", "rater": "", "note": "why"},
    ])
    done = cli(["judges", "label", str(recipe), "--from", str(sheet)])
    assert done.returncode == 1, done.stderr  # c3: a note without a rater is reported
    assert "row 5: a note is kept per rater" in done.stderr
    assert _annotations(recipe) == {("c1", "Ana"): ("fail", "=not a formula"),
                                    ("c1", "Ben"): ("pass", None)}
    assert [r["expected"] for r in rows_of(calibration(recipe))] == ["fail", "pass", None]
    assert "2 rater label(s) or note(s) written" in done.stdout

    blind = tmp_path / "ben.csv"
    assert cli(["judges", "label", str(recipe), "--to-csv", str(blind), "--rater",
                "Ben"]).returncode == 0
    records = _sheet(blind)
    assert list(records[0])[:6] == ["line", "conversation_id", "split", "expected", "rater",
                                    "note"]
    assert [(r["expected"], r["rater"], r["note"]) for r in records] == [
        ("pass", "Ben", ""), ("", "Ben", ""), ("", "Ben", "")]  # not Ana's fail, not expected
    ana = tmp_path / "ana.csv"
    cli(["judges", "label", str(recipe), "--to-csv", str(ana), "--rater", "Ana"])
    assert _sheet(ana)[0]["note"] == "'=not a formula"  # escaped, and read back unescaped
    same = cli(["judges", "label", str(recipe), "--from", str(ana)])
    assert same.returncode == 0, same.stderr  # the round trip changes nothing
    assert same.stdout.startswith("0 row(s) written") and "rater label" not in same.stdout
    assert _annotations(recipe)[("c1", "Ana")] == ("fail", "=not a formula")


def test_the_command_line_rater_fills_empty_rater_cells_and_overwrite_applies(
        tmp_path: Path, cli: Cli) -> None:
    recipe = _recipe(tmp_path / "r")
    sheet = tmp_path / "labels.csv"
    _write(sheet, [{"conversation_id": "c1", "expected": "pass", "rater": "", "note": "ok"}])
    assert cli(["judges", "label", str(recipe), "--from", str(sheet), "--rater",
                "Chen"]).returncode == 0
    _write(sheet, [{"conversation_id": "c1", "expected": "fail", "rater": "Chen", "note": ""}])
    refused = cli(["judges", "label", str(recipe), "--from", str(sheet)])
    assert refused.returncode == 1
    assert "rater Chen already labelled line 1 pass, the sheet says fail" in refused.stderr
    changed = cli(["judges", "label", str(recipe), "--from", str(sheet), "--overwrite"])
    assert changed.returncode == 0, changed.stderr
    assert _annotations(recipe) == {("c1", "Chen"): ("fail", "ok")}  # an empty note keeps it
    assert rows_of(calibration(recipe))[0]["expected"] == "fail"  # a sole rater's own relabel


@pytest.mark.parametrize(("args", "says"), [
    (["--rater", "adjudicated"], "--rater adjudicated is reserved"),
    (["--rater", " Ana"], "starts or ends with a space"),
    (["--rater", "Ana", "--adjudicate", "--no-open"], "--rater does not apply to it"),
    (["--rater", "Ana", "--set", "1=pass"], "--set writes expected only"),
    (["--adjudicate", "--all"], "--all and --adjudicate choose different queues"),
    (["--adjudicate", "--to-csv", "x.csv"], "--adjudicate only apply to the browser app"),
])
def test_rater_flags_are_checked(tmp_path: Path, cli: Cli, args: list[str], says: str) -> None:
    recipe = _recipe(tmp_path / "r")
    done = cli(["judges", "label", str(recipe), *args], cwd=tmp_path)
    assert done.returncode == 2 and says in done.stderr, done.stderr


def test_rater_me_is_git_s_user_name_else_the_login_name(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "config", "user.name", "Dee Example"],
                   check=True)
    assert resolve_rater("me", tmp_path) == "Dee Example"
    assert resolve_rater("Ana", tmp_path) == "Ana"
    outside = tmp_path.parent / "no-git-here"
    outside.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(outside))  # no global git identity either
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(outside.parent))
    monkeypatch.setenv("LOGNAME", "dee")
    assert resolve_rater("me", outside) == "dee"


def test_a_sheet_without_raters_never_reads_the_annotations(tmp_path: Path, cli: Cli) -> None:
    recipe = _recipe(tmp_path / "r")
    (recipe / "judges" / "helpful.annotations.jsonl").write_text("not json\n")
    sheet = tmp_path / "labels.csv"
    _write(sheet, [{"conversation_id": "c1", "expected": "pass"}])
    done = cli(["judges", "label", str(recipe), "--from", str(sheet)])
    assert done.returncode == 0, done.stderr
    _write(sheet, [{"conversation_id": "c2", "expected": "pass", "rater": "Ana"}])
    refused = cli(["judges", "label", str(recipe), "--from", str(sheet)])
    assert refused.returncode == 1 and "helpful.annotations.jsonl:1: not valid JSON" \
        in refused.stderr
    assert [r["expected"] for r in rows_of(calibration(recipe))] == ["pass", None, None]
