"""Every writer of a calibration file writes it where it lives, or refuses alike.

Through a symbolic link the target is written (the link stays a link, the
target keeps its mode and owner), and a file the user cannot write (0444) is
refused by every writer with exit 2 naming it, as ``--append-to`` already did.
The writers: ``judges label --set``, ``--from`` a sheet, the browser app (its
start and its writes), ``judges split`` and ``conversations get --append-to``.

Permission cases run the real CLI in a child that obeys file modes although the
tests run as root (``honour_permissions``).
"""

from __future__ import annotations

import csv
import io
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from tests.hostile.harness import run_cli_measured
from tests.labelling.browser.harness import LabelApp
from tests.labelling.recipes import UNGATED_JUDGE, row, rows_of, write_recipe

Cli = Callable[..., CompletedProcess[str]]
NAME = "helpful.calibration.jsonl"
LINK_TEXT = Path("..") / ".." / "data" / NAME


def _sheet(path: Path, records: list[dict[str, str]]) -> Path:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(records[0]), lineterminator="\r\n")
    writer.writeheader()
    writer.writerows(records)
    path.write_text(buffer.getvalue(), encoding="utf-8")
    return path


def _linked_recipe(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A recipe whose calibration file is a relative link to a file outside it (0640)."""
    rows = [row("c1", expected="pass", split="train"), row("c2"),
            *(row(f"l{n}", expected="pass") for n in range(4))]
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, rows)})
    data = tmp_path / "data"
    data.mkdir()
    target = data / NAME
    link = recipe / "judges" / NAME
    link.rename(target)
    link.symlink_to(LINK_TEXT)
    target.chmod(0o640)
    os.chown(target, 4242, 4343)  # the tests run as root
    return recipe, link, target


WRITERS: dict[str, Callable[[Path, Path], list[str]]] = {
    "set": lambda recipe, tmp: ["judges", "label", str(recipe), "--set", "2=fail:dev"],
    "from": lambda recipe, tmp: ["judges", "label", str(recipe), "--from", str(_sheet(
        tmp / "s.csv", [{"conversation_id": "c2", "expected": "fail", "split": "dev"}]))],
    "split": lambda recipe, tmp: ["judges", "split", str(recipe)],
}


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_symlinked_calibration_file_is_written_through_the_link(
        tmp_path: Path, cli: Cli, writer: str) -> None:
    recipe, link, target = _linked_recipe(tmp_path)
    before = rows_of(target)

    result = cli(WRITERS[writer](recipe, tmp_path))

    assert result.returncode == 0, result.stderr
    assert link.is_symlink() and os.readlink(link) == str(LINK_TEXT)
    after = rows_of(target)
    assert after != before, "the target never got the write"
    if writer != "split":
        assert (after[1]["expected"], after[1]["split"]) == ("fail", "dev")
    info = target.stat()
    assert stat.S_IMODE(info.st_mode) == 0o640 and (info.st_uid, info.st_gid) == (4242, 4343)
    assert [p.name for p in target.parent.iterdir()] == [NAME]  # no temp file left behind


def test_the_app_writes_through_the_link(tmp_path: Path) -> None:
    recipe, link, target = _linked_recipe(tmp_path)
    app = LabelApp.start(recipe)
    try:
        answer = app.label(2, expected="fail", split="dev")
        assert answer.status == 200, answer.body
    finally:
        app.stop()
    assert link.is_symlink()
    assert (rows_of(target)[1]["expected"], rows_of(target)[1]["split"]) == ("fail", "dev")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_a_link_to_a_file_not_named_as_a_calibration_file_is_refused(tmp_path: Path,
                                                                     cli: Cli) -> None:
    recipe, link, target = _linked_recipe(tmp_path)
    other = target.with_name("notes.jsonl")
    target.rename(other)
    link.unlink()
    link.symlink_to(other)
    before = other.read_bytes()

    result = cli(["judges", "label", str(recipe), "--set", "2=fail:dev"])

    assert result.returncode == 2, result.stderr
    assert f"{link} is a symbolic link to {other}" in result.stderr
    assert other.read_bytes() == before and link.is_symlink()


def _read_only_recipe(tmp_path: Path) -> tuple[Path, Path]:
    rows = [row("c1", expected="pass"), row("c2"), *(row(f"l{n}", expected="fail")
                                                      for n in range(4))]
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, rows)})
    path = recipe / "judges" / NAME
    path.chmod(0o444)
    return recipe, path


READ_ONLY_WRITERS: dict[str, Callable[[Path, Path], list[str]]] = {
    **WRITERS,
    "app": lambda recipe, tmp: ["judges", "label", str(recipe), "--no-open"],
    "append-to": lambda recipe, tmp: [
        "conversations", "get", "--ids-file", str(_ids(tmp)), "--judge-fixtures", "--format",
        "json", "--append-to", str(recipe / "judges" / NAME)],
}


def _ids(tmp_path: Path) -> Path:
    (tmp_path / "ids.txt").write_text("conv_01\n")
    return tmp_path / "ids.txt"


@pytest.mark.parametrize("writer", sorted(READ_ONLY_WRITERS))
def test_a_read_only_calibration_file_is_refused_by_every_writer(tmp_path: Path,
                                                                 writer: str) -> None:
    recipe, path = _read_only_recipe(tmp_path)
    before = path.read_bytes()

    outcome = run_cli_measured(READ_ONLY_WRITERS[writer](recipe, tmp_path), tmp_path,
                               honour_permissions=True, extra_env={
                                   "INTROSPECTION_API_URL": "http://127.0.0.1:9",
                                   "INTROSPECTION_TOKEN": "itk_never_used",
                                   "INTROSPECTION_CONFIG_DIR": str(tmp_path / "config")})

    assert outcome.returncode == 2, (outcome.stdout, outcome.stderr)
    assert f"{path}" in outcome.stderr and "is not writable" in outcome.stderr
    assert "Traceback" not in outcome.stderr
    assert path.read_bytes() == before
    assert stat.S_IMODE(path.stat().st_mode) == 0o444


def test_split_dry_run_reads_a_read_only_file(tmp_path: Path) -> None:
    recipe, _ = _read_only_recipe(tmp_path)
    outcome = run_cli_measured(["judges", "split", str(recipe), "--dry-run"], tmp_path,
                               honour_permissions=True)
    assert outcome.returncode == 0, outcome.stderr
    assert "dry run: nothing written" in outcome.stdout


def test_a_file_made_read_only_during_a_session_is_refused_on_write(tmp_path: Path) -> None:
    rows = [row("c1"), row("c2")]
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, rows)})
    path = recipe / "judges" / NAME
    before = path.read_bytes()
    app = LabelApp.start(recipe, honour_permissions=True)
    try:
        version = app.row(1)["version"]
        path.chmod(0o444)
        answer = app.request("POST", "/api/label",
                             body={"line": 1, "version": version, "expected": "pass"})
    finally:
        app.stop()
    assert answer.status == 400, answer.body
    error = json.loads(answer.body)["error"]
    assert str(path) in error and "is not writable" in error
    assert path.read_bytes() == before
