"""``judges agree`` as the real CLI: text and JSON, the rows in conflict with their lines,
and every refusal a sentence with exit 1 (never NaN), bad options exit 2."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from introspection_cli.annotations.record import ADJUDICATED, Annotation
from tests.labelling.recipes import UNGATED_JUDGE, calibration, row, rows_of, write_recipe

Cli = Callable[..., CompletedProcess[str]]


def _recipe(root: Path, labels: dict[str, str], *, extra: bytes = b"") -> Path:
    """rater -> one label letter per row (p, f, n, - for none) over rows c0..cN."""
    count = len(next(iter(labels.values())))
    recipe = write_recipe(root, {"helpful": (UNGATED_JUDGE, [row(f"c{i}") for i in range(count)])})
    rows = rows_of(calibration(recipe))
    words = {"p": "pass", "f": "fail", "n": "not_applicable"}
    lines = [Annotation(rows[i]["source"]["conversation_id"], rows[i]["snapshot_hash"], rater,
                        words[letter], None, "2026-11-21T09:30:00Z").line()
             for rater, letters in labels.items() for i, letter in enumerate(letters)
             if letter != "-"]
    (recipe / "judges" / "helpful.annotations.jsonl").write_bytes(
        b"".join(line + b"\n" for line in lines) + extra)
    return recipe


def test_json_names_the_conflicts_the_adjudications_and_the_orphans(tmp_path: Path,
                                                                    cli: Cli) -> None:
    orphan = Annotation("gone", "sha256:" + "0" * 64, "Ana", "pass", None,
                        "2026-11-21T09:30:00Z").line() + b"\n"
    recipe = _recipe(tmp_path / "r", {"Ana": "ppfn", "Ben": "pffn"}, extra=orphan)
    rows = rows_of(calibration(recipe))
    settled = Annotation("c2", rows[2]["snapshot_hash"], ADJUDICATED, "fail", None,
                         "2026-11-21T09:30:00Z").line() + b"\n"
    with (recipe / "judges" / "helpful.annotations.jsonl").open("ab") as handle:
        handle.write(settled)
    done = cli(["judges", "agree", str(recipe), "--format", "json"])
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["raters"] == ["Ana", "Ben"]  # adjudicated is not a rater
    assert [(c["line"], c["conversation_id"], c["labels"]) for c in document["conflicts"]] == [
        (2, "c1", {"Ana": "pass", "Ben": "fail"})]
    assert (document["adjudicated"], document["orphans"]) == (1, 1)
    alpha = document["alpha"]
    assert alpha["low"] <= alpha["value"] <= alpha["high"] and alpha["draws"] == 2000
    text = cli(["judges", "agree", str(recipe)]).stdout
    assert "line 2 c1: Ana pass, Ben fail" in text and "1 row(s) adjudicated" in text
    assert "1 annotation(s) of conversations the calibration file no longer holds" in text


@pytest.mark.parametrize(("labels", "says"), [
    ({"Ana": "pfpf"}, "agreement needs two raters; the annotations name 1 (Ana)"),
    ({"Ana": "pp--", "Ben": "--ff"}, "no row is labelled by two raters or more"),
    ({"Ana": "pppp", "Ben": "ppp-"}, "Krippendorff's alpha is undefined: every label on the "
                                     "rows two raters or more labelled is pass"),
])
def test_labels_that_give_no_figures_are_refused(tmp_path: Path, cli: Cli,
                                                 labels: dict[str, str], says: str) -> None:
    done = cli(["judges", "agree", str(_recipe(tmp_path / "r", labels))])
    assert done.returncode == 1 and done.stdout == ""
    assert f"judge helpful: {says}" in done.stderr
    assert "nan" not in done.stderr.lower() and "Traceback" not in done.stderr


def test_no_annotations_file_and_bad_options(tmp_path: Path, cli: Cli) -> None:
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, [row("c1")])})
    missing = cli(["judges", "agree", str(recipe)])
    assert missing.returncode == 1 and "has no annotations file" in missing.stderr
    assert "judges label --rater NAME" in missing.stderr
    assert cli(["judges", "agree", str(recipe), "--format", "csv"]).returncode == 2
    assert cli(["judges", "agree", str(recipe), "--judge", "nobody"]).returncode == 2
    broken = tmp_path / "r" / "judges" / "helpful.annotations.jsonl"
    broken.write_text("{}\n")
    unreadable = cli(["judges", "agree", str(recipe)])
    assert unreadable.returncode == 1 and "helpful.annotations.jsonl:1: not an annotation" \
        in unreadable.stderr
