"""`judges label --to-csv` / `--from`: a sheet round trip changes only the labels edited."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

from tests.labelling.recipes import UNGATED_JUDGE, calibration, row, rows_of, write_recipe

Cli = Callable[..., CompletedProcess[str]]


def _sheet(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))


def _write_sheet(path: Path, records: list[dict[str, str]], *, bom: bool = False) -> None:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(records[0]), lineterminator="\r\n")
    writer.writeheader()
    writer.writerows(records)
    path.write_text(("\ufeff" if bom else "") + buffer.getvalue(), encoding="utf-8")


def test_round_trip_changes_only_the_labels_edited(tmp_path: Path, cli: Cli) -> None:
    rows = [row("c1", "Refund please"), row("c2", expected="fail", split="test"),
            row("c3"), row("c4")]
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, rows)})
    before = calibration(recipe).read_bytes().split(b"\n")
    sheet = tmp_path / "labels.csv"
    exported = cli(["judges", "label", str(recipe), "--to-csv", str(sheet)])
    assert exported.returncode == 0, exported.stderr
    records = _sheet(sheet)
    assert [r["conversation_id"] for r in records] == ["c1", "c2", "c3", "c4"]
    assert records[1]["expected"] == "fail" and records[1]["split"] == "test"
    assert records[0]["transcript"].startswith("[1] user: Refund please\n[2] tool lookup_invoice")
    # Unchanged sheet: nothing to write.
    same = cli(["judges", "label", str(recipe), "--from", str(sheet)])
    assert same.returncode == 0 and "0 row(s) written" in same.stdout
    records[0]["expected"] = "pass"
    records[3]["expected"] = "Not_Applicable "  # spreadsheets: case and stray spaces
    _write_sheet(sheet, records, bom=True)
    imported = cli(["judges", "label", str(recipe), "--from", str(sheet)])
    assert imported.returncode == 0, imported.stderr
    after = calibration(recipe).read_bytes().split(b"\n")
    assert after[0] == before[0].replace(b'"expected": null', b'"expected": "pass"')
    assert after[3] == before[3].replace(b'"expected": null', b'"expected": "not_applicable"')
    assert [after[1], after[2], after[4]] == [before[1], before[2], before[4]]


def test_a_different_existing_label_needs_overwrite(tmp_path: Path, cli: Cli) -> None:
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, [
        row("c1", expected="fail", split="dev"), row("c2")])})
    sheet = tmp_path / "s.csv"
    _write_sheet(sheet, [{"conversation_id": "c1", "expected": "pass", "split": "test"},
                         {"conversation_id": "c2", "expected": "pass", "split": ""},
                         {"conversation_id": "c9", "expected": "fail", "split": ""}])
    result = cli(["judges", "label", str(recipe), "--from", str(sheet)])
    assert result.returncode == 1
    assert "line 1 already has expected fail, the sheet says pass; pass --overwrite" \
        in result.stderr
    assert "already has split dev, the sheet says test" in result.stderr
    assert "s.csv row 4: conversation c9 is not a usable row" in result.stderr
    assert [(r["expected"], r["split"]) for r in rows_of(calibration(recipe))] == [
        ("fail", "dev"), ("pass", None)]
    forced = cli(["judges", "label", str(recipe), "--from", str(sheet), "--overwrite"])
    assert forced.returncode == 1  # c9 is still not in the file
    assert [(r["expected"], r["split"]) for r in rows_of(calibration(recipe))] == [
        ("pass", "test"), ("pass", None)]


def test_bad_cells_are_reported_not_guessed(tmp_path: Path, cli: Cli) -> None:
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, [row("c1"), row("c2")])})
    sheet = tmp_path / "s.csv"
    _write_sheet(sheet, [{"conversation_id": "c1", "expected": "yes", "split": ""},
                         {"conversation_id": "c2", "expected": "pass", "split": "holdout"},
                         {"conversation_id": "c1", "expected": "fail", "split": ""}])
    result = cli(["judges", "label", str(recipe), "--from", str(sheet)])
    assert result.returncode == 1
    assert "s.csv row 2: unknown label 'yes'" in result.stderr
    assert "s.csv row 3: unknown split 'holdout'" in result.stderr
    assert "s.csv row 4: conversation c1 is also on row(s) 2; none of them is used" \
        in result.stderr
    assert all(r["expected"] is None for r in rows_of(calibration(recipe)))


def test_a_sheet_without_the_columns_is_a_usage_error(tmp_path: Path, cli: Cli) -> None:
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, [row("c1")])})
    sheet = tmp_path / "s.csv"
    sheet.write_text("id,label\nc1,pass\n", encoding="utf-8")
    result = cli(["judges", "label", str(recipe), "--from", str(sheet)])
    assert result.returncode == 2 and "conversation_id and expected missing" in result.stderr
    itself = cli(["judges", "label", str(recipe), "--to-csv", str(calibration(recipe))])
    assert itself.returncode == 2 and "is the calibration file itself" in itself.stderr


def test_cells_a_spreadsheet_would_run_as_formulas_are_quoted(tmp_path: Path, cli: Cli) -> None:
    hostile = '=HYPERLINK("https://evil.invalid","x")'
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, [row(hostile)])})
    sheet = tmp_path / "s.csv"
    assert cli(["judges", "label", str(recipe), "--to-csv", str(sheet)]).returncode == 0
    records = _sheet(sheet)
    assert records[0]["conversation_id"] == "'" + hostile
    records[0]["expected"] = "fail"
    _write_sheet(sheet, records)
    assert cli(["judges", "label", str(recipe), "--from", str(sheet)]).returncode == 0
    assert json.loads(calibration(recipe).read_text())["expected"] == "fail"


def test_formula_escaping_is_injective_and_reversed_on_import(tmp_path: Path, cli: Cli) -> None:
    ids = ["=1+1", "'=1+1", "''=1+1", "'plain", "plain"]
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, [row(i) for i in ids])})
    sheet = tmp_path / "s.csv"
    assert cli(["judges", "label", str(recipe), "--to-csv", str(sheet)]).returncode == 0
    records = _sheet(sheet)
    cells = [r["conversation_id"] for r in records]
    assert cells == ["'=1+1", "''=1+1", "'''=1+1", "''plain", "plain"]
    assert len(set(cells)) == len(ids)
    for record, label in zip(records, ["pass", "fail", "not_applicable", "fail", "pass"],
                             strict=True):
        record["expected"] = label
    _write_sheet(sheet, records)
    result = cli(["judges", "label", str(recipe), "--from", str(sheet)])
    assert result.returncode == 0, result.stderr
    assert [(r["judge_input"]["conversation_id"], r["expected"])
            for r in rows_of(calibration(recipe))] == [
        ("=1+1", "pass"), ("'=1+1", "fail"), ("''=1+1", "not_applicable"),
        ("'plain", "fail"), ("plain", "pass")]


def test_a_repeated_header_column_is_an_error_naming_it(tmp_path: Path, cli: Cli) -> None:
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, [row("c1"), row("c2")])})
    before = calibration(recipe).read_bytes()
    sheet = tmp_path / "s.csv"
    for header, named in (("conversation_id,expected,conversation_id", "conversation_id"),
                          ("conversation_id,expected, expected", "expected"),
                          ("split,conversation_id,expected,split", "split")):
        sheet.write_text(f"{header}\r\nc1,pass,c2\r\n", encoding="utf-8")
        result = cli(["judges", "label", str(recipe), "--from", str(sheet)])
        assert result.returncode == 2, (header, result.stderr)
        assert f"column {named} appears more than once" in result.stderr, result.stderr
        assert calibration(recipe).read_bytes() == before


def test_a_cell_over_the_csv_limit_is_a_clear_error(tmp_path: Path, cli: Cli) -> None:
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, [row("c1")])})
    sheet = tmp_path / "s.csv"
    sheet.write_text("conversation_id,expected,note\r\nc1,pass,ok\r\nc1,pass,"
                     + "x" * 131_073 + "\r\n", encoding="utf-8")
    result = cli(["judges", "label", str(recipe), "--from", str(sheet)])
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert f"--from {sheet} row 3: a cell holds more than 131,072 characters" in result.stderr
    assert rows_of(calibration(recipe))[0]["expected"] is None


def test_a_sheet_over_64_mib_is_a_clear_error(tmp_path: Path, cli: Cli) -> None:
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, [row("c1")])})
    sheet = tmp_path / "s.csv"
    with sheet.open("wb") as handle:
        handle.write(b"conversation_id,expected\r\n")
        for _ in range(100):
            handle.write((b"c1,pass," + b"y" * 1000 + b"\r\n") * 1000)  # 100 MB of rows
    result = cli(["judges", "label", str(recipe), "--from", str(sheet)])
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert f"--from {sheet} is larger than 64 MiB" in result.stderr
