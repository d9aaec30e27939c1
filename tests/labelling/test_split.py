"""`judges split`: stratified by label, deterministic, frozen, and written by the byte rule."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

from tests.labelling.recipes import UNGATED_JUDGE, calibration, row, rows_of, write_recipe

Cli = Callable[..., CompletedProcess[str]]


def _labelled(counts: dict[str, int], prefix: str = "c") -> list[dict[str, object]]:
    return [row(f"{prefix}_{label}_{n:03d}", expected=label)
            for label, count in counts.items() for n in range(count)]


def _table(rows: list[dict[str, object]]) -> Counter[tuple[object, object]]:
    return Counter((r.get("split"), r.get("expected")) for r in rows)


def test_each_label_is_split_by_the_ratios(tmp_path: Path, cli: Cli) -> None:
    rows = _labelled({"pass": 30, "fail": 20, "not_applicable": 5})
    rows += [row(f"u_{n}") for n in range(4)]  # unlabelled: keep split null
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, rows)})
    result = cli(["judges", "split", str(recipe)])
    assert result.returncode == 0, result.stderr
    table = _table(rows_of(calibration(recipe)))
    assert [table["train", "pass"], table["dev", "pass"], table["test", "pass"]] == [6, 12, 12]
    assert [table["train", "fail"], table["dev", "fail"], table["test", "fail"]] == [4, 8, 8]
    # 5 rows at 1:2:2 -- and the printed table says the same
    assert [table["train", "not_applicable"], table["dev", "not_applicable"],
            table["test", "not_applicable"]] == [1, 2, 2]
    assert table[None, None] == 4
    lines = {line.split()[0]: line.split()[1:] for line in result.stdout.splitlines()
             if line.split() and line.split()[0] in {"train", "dev", "test", "none", "total"}}
    assert lines["test"] == ["12", "8", "2", "0", "22"]
    assert lines["none"] == ["0", "0", "0", "4", "4"]


def test_same_rows_and_seed_same_splits_and_a_second_run_changes_nothing(
        tmp_path: Path, cli: Cli) -> None:
    rows = _labelled({"pass": 9, "fail": 7})
    first = write_recipe(tmp_path / "a", {"helpful": (UNGATED_JUDGE, rows)})
    second = tmp_path / "b"
    shutil.copytree(first, second)
    assert cli(["judges", "split", str(first), "--seed", "7"]).returncode == 0
    assert cli(["judges", "split", str(second), "--seed", "7"]).returncode == 0
    after = calibration(first).read_bytes()
    assert after == calibration(second).read_bytes()
    again = cli(["judges", "split", str(first), "--seed", "7"])
    assert again.returncode == 0 and "a split to 0 row(s)" in again.stdout
    assert calibration(first).read_bytes() == after


def test_rows_go_in_hash_order_to_the_split_furthest_below_target(tmp_path: Path,
                                                                   cli: Cli) -> None:
    rows = _labelled({"pass": 3})
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, rows)})
    assert cli(["judges", "split", str(recipe), "--ratios", "1:1:1", "--seed", "42"]
               ).returncode == 0
    order = sorted((str(r["source"]["conversation_id"]) for r in rows),  # type: ignore[index]
                   key=lambda c: hashlib.sha256(f"42:{c}".encode()).hexdigest())
    splits = {r["source"]["conversation_id"]: r["split"] for r in rows_of(calibration(recipe))}
    # all three splits are equally short at first: ties go to test, then dev, then train
    assert [splits[c] for c in order] == ["test", "dev", "train"]


def test_rows_with_a_split_never_move_and_count_toward_the_target(tmp_path: Path,
                                                                   cli: Cli) -> None:
    rows = _labelled({"pass": 10})
    for r in rows[:4]:
        r["split"] = "train"  # already twice the train target of 2
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, rows)})
    before = calibration(recipe).read_bytes().splitlines()
    assert cli(["judges", "split", str(recipe)]).returncode == 0
    after = calibration(recipe).read_bytes().splitlines()
    assert after[:4] == before[:4]  # byte for byte
    assert Counter(r["split"] for r in rows_of(calibration(recipe))) == {
        "train": 4, "dev": 3, "test": 3}


def test_only_the_split_value_bytes_change(tmp_path: Path, cli: Cli) -> None:
    rows = _labelled({"pass": 2, "fail": 2})
    raw = [json.dumps(r, indent=None, separators=(", ", " : ")) for r in rows]
    raw[1] = raw[1].replace(', "split" : null', "")  # the member is absent on this line
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, raw)}, newline="\r\n")
    assert cli(["judges", "split", str(recipe)]).returncode == 0
    content = calibration(recipe).read_bytes()
    assert content.endswith(b"\r\n") and content.count(b"\r\n") == 4
    for old, new in zip(raw, content.decode().split("\r\n"), strict=False):
        split = json.loads(new)["split"]
        if '"split" : null' in old:
            assert new == old.replace('"split" : null', f'"split" : "{split}"')
        else:
            assert new == old[:-1] + f', "split" : "{split}"}}'


def test_dry_run_writes_nothing(tmp_path: Path, cli: Cli) -> None:
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, _labelled({"pass": 5}))})
    before = calibration(recipe).read_bytes()
    result = cli(["judges", "split", str(recipe), "--dry-run"])
    assert result.returncode == 0
    assert "would assign a split to 5 row(s)" in result.stdout and "nothing written" in result.stdout
    assert calibration(recipe).read_bytes() == before


def test_a_test_split_too_small_to_certify_is_warned_about(tmp_path: Path, cli: Cli) -> None:
    # 30 pass and 40 fail at 20:40:40: test gets 12 pass and 16 fail, train 6 and 8. Only
    # test is warned about: certification looks at it, and a small train split is a choice.
    recipe = write_recipe(tmp_path / "r", {"helpful": (
        UNGATED_JUDGE, _labelled({"pass": 30, "fail": 40}))})
    result = cli(["judges", "split", str(recipe)])
    assert result.returncode == 0
    warnings = [line for line in result.stderr.splitlines() if "warning:" in line]
    assert len(warnings) == 1, result.stderr
    assert "split test holds 12 pass row(s)" in warnings[0]
    assert "the 16 of each needed" in warnings[0]


def test_rejected_rows_are_left_alone_and_reported(tmp_path: Path, cli: Cli) -> None:
    tampered = row("c_bad", expected="pass")
    tampered["judge_input"]["events"][0]["text"] = "edited after export"  # type: ignore[index]
    rows = [*_labelled({"pass": 3}), tampered]
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, rows)})
    bad_line = calibration(recipe).read_bytes().splitlines()[3]
    result = cli(["judges", "split", str(recipe)])
    assert result.returncode == 1
    assert "1 row(s) rejected (fixture-hash-mismatch 1)" in result.stderr
    assert calibration(recipe).read_bytes().splitlines()[3] == bad_line
    assert all(r["split"] for r in rows_of(calibration(recipe))[:3])


def test_bad_ratios_are_a_usage_error(tmp_path: Path, cli: Cli) -> None:
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, _labelled({"pass": 1}))})
    for ratios in ("1:2", "a:b:c", "0:0:0", "-1:1:1"):
        result = cli(["judges", "split", str(recipe), "--ratios", ratios])
        assert result.returncode == 2 and "--ratios" in result.stderr, ratios
