"""`judges split` for labelling in rounds (issue 22 item 3): frozen splits said up front,
warnings only where they matter, `--reset` that never moves a row seen in test, and
`--fill-test` that fills test to the plan."""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from introspection_cli.certification.exposure_file import append_looks, exposure_path
from introspection_cli.certification.exposure_record import test_look as look_of
from tests.certification.test_power import oracle_plan
from tests.evaluation.conftest import _clean_env, stub  # noqa: F401
from tests.labelling.recipes import UNGATED_JUDGE, calibration, row, rows_of, write_recipe

Cli = Callable[..., CompletedProcess[str]]
JOINT = math.sqrt(0.8)


def _labelled(counts: dict[str, int], *, split: str | None = None, prefix: str = "c",
              verdict: bool = False) -> list[dict[str, object]]:
    return [row(f"{prefix}_{label}_{n:03d}",
                f"Where is my refund {n}?" + (f" VERDICT:{label}" if verdict else ""),
                expected=label, split=split)
            for label, count in counts.items() for n in range(count)]


def _split(cli: Cli, recipe: Path, *args: str, cache: Path | None = None
           ) -> CompletedProcess[str]:
    return cli(["judges", "split", str(recipe), *args],
               env={"INTROSPECTION_CACHE_DIR": str(cache or recipe.parent / "cache")})


def test_frozen_splits_are_said_up_front_and_explain_an_empty_run(tmp_path: Path,
                                                                  cli: Cli) -> None:
    # The issue: 60 rows split at 20:40:40, then `--ratios 10:30:60 --dry-run` said only
    # "would assign a split to 0 row(s)".
    recipe = write_recipe(tmp_path / "r", {"helpful": (
        UNGATED_JUDGE, _labelled({"pass": 30, "fail": 30}))})
    assert _split(cli, recipe).returncode == 0
    result = _split(cli, recipe, "--ratios", "10:30:60", "--dry-run")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == ("judges split: splits are frozen (a row that has a split keeps it, so "
                        "test rows stay held out); --ratios 10:30:60 apply only to labelled "
                        "rows without a split.")
    assert lines[1].startswith("judge helpful: would assign a split to 0 row(s)")
    assert lines[2] == ("  60 labelled row(s) already have a split and keep it; 0 had none "
                        "(`judges split --reset` clears the splits of rows never seen in test)")


def test_warnings_only_for_a_small_test_split_and_an_empty_dev(tmp_path: Path,
                                                               cli: Cli) -> None:
    # The 6 warnings for 60 rows (two judges, train, dev and test each short):
    # now one per judge, about test, the split certification looks at.
    rows = _labelled({"pass": 30, "fail": 30})
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, rows), "other": (
        UNGATED_JUDGE.replace("name: helpful", "name: other"), rows)})
    result = _split(cli, recipe)
    warnings = [line for line in result.stderr.splitlines() if "warning:" in line]
    assert len(warnings) == 2, result.stderr
    for warning, judge in zip(warnings, ("helpful", "other"), strict=True):
        assert f"judge {judge}: split test holds 12 pass and 12 fail row(s), fewer than the " \
               "16 of each needed" in warning
    # 40 of each: test holds 16, enough to certify a perfect judge; no warning at all.
    roomy = write_recipe(tmp_path / "roomy", {"helpful": (
        UNGATED_JUDGE, _labelled({"pass": 40, "fail": 40}))})
    assert "warning" not in _split(cli, roomy).stderr
    # A dev split with no row is warned about; one the ratios leave out on purpose is not.
    no_dev = _labelled({"pass": 20, "fail": 20}, split="test") + _labelled(
        {"pass": 4}, split="train", prefix="t")
    recipe = write_recipe(tmp_path / "nodev", {"helpful": (UNGATED_JUDGE, no_dev)})
    result = _split(cli, recipe)
    assert "judge helpful: split dev is empty" in result.stderr
    assert "dev is empty" not in _split(cli, recipe, "--ratios", "1:0:1").stderr


def _seen_in_test(recipe: Path, rows: list[dict[str, object]]) -> None:
    look = look_of([(str(r["source"]["conversation_id"]), str(r["snapshot_hash"]),  # type: ignore[index]
                       str(r["expected"]), str(r["expected"])) for r in rows],
                     fingerprint="sha256:" + "a" * 64, samples=1, temperature=None)
    assert look is not None
    append_looks(exposure_path(recipe / "judges", "helpful"), [look])


def test_reset_clears_rows_never_seen_in_test_and_never_moves_a_seen_one(
        tmp_path: Path, cli: Cli) -> None:
    rows = _labelled({"pass": 10, "fail": 10})
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, rows)})
    assert _split(cli, recipe).returncode == 0
    split = rows_of(calibration(recipe))
    seen = [r for r in split if r["split"] == "test"][:3]
    _seen_in_test(recipe, seen)
    before = calibration(recipe).read_bytes()
    dry = _split(cli, recipe, "--reset", "--dry-run")
    assert dry.returncode == 1 and calibration(recipe).read_bytes() == before
    assert "would clear the split of 17 row(s)" in dry.stdout
    result = _split(cli, recipe, "--reset")
    assert result.returncode == 1
    ids = [str(r["source"]["conversation_id"]) for r in seen]  # type: ignore[index]
    assert f"judge helpful: 3 row(s) seen in test keep their split: {ids[0]} (test, line" \
        in result.stderr
    assert all(cid in result.stderr for cid in ids)
    after = rows_of(calibration(recipe))
    assert Counter(r["split"] for r in after) == {None: 17, "test": 3}
    assert {str(r["source"]["conversation_id"]) for r in after  # type: ignore[index]
            if r["split"]} == set(ids)
    # Only the split value of each cleared line changed, byte for byte.
    for old, new in zip(before.splitlines(), calibration(recipe).read_bytes().splitlines(),
                        strict=True):
        value = json.loads(old)["split"]
        assert new in (old, old.replace(f'"split": "{value}"'.encode(), b'"split": null'))
    # The cleared rows are split again by the new ratios; the seen ones stay in test.
    again = _split(cli, recipe, "--ratios", "0:1:1")
    assert again.returncode == 0 and "assigned a split to 17 row(s)" in again.stdout
    assert {str(r["source"]["conversation_id"]) for r in rows_of(calibration(recipe))  # type: ignore[index]
            if r["split"] == "test"} >= set(ids)


def test_reset_without_any_look_clears_every_split(tmp_path: Path, cli: Cli) -> None:
    recipe = write_recipe(tmp_path / "r", {"helpful": (
        UNGATED_JUDGE, _labelled({"pass": 4}, split="dev"))})
    result = _split(cli, recipe, "--reset")
    assert result.returncode == 0, result.stderr
    assert all(r["split"] is None for r in rows_of(calibration(recipe)))
    assert result.stdout.startswith("judges split --reset: the split of every row never seen "
                                    "in test is cleared")


def test_reset_takes_no_ratios_and_no_fill(tmp_path: Path, cli: Cli) -> None:
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, _labelled({"pass": 2}))})
    for extra in (["--ratios", "1:1:1"], ["--fill-test"]):
        result = _split(cli, recipe, "--reset", *extra)
        assert result.returncode == 2 and "--reset only clears splits" in result.stderr


def _order(seed: int, rows: list[dict[str, object]]) -> list[str]:
    ids = [str(r["source"]["conversation_id"]) for r in rows]  # type: ignore[index]
    return sorted(ids, key=lambda cid: hashlib.sha256(f"{seed}:{cid}".encode()).hexdigest())


@pytest.mark.usefixtures("stub")  # the dev rows are judged by the stub model server
def test_fill_test_sends_rows_to_test_until_the_plan_is_met(tmp_path: Path, cli: Cli) -> None:
    # Dev figures first: 30 of 30 pass and 30 of 30 fail rows judged right, shrunk to the
    # Beta(1/2, 1/2) posterior's 20th percentile, plan a test split scipy's binomial sizes.
    dev = _labelled({"pass": 30, "fail": 30}, split="dev", prefix="d", verdict=True)
    fresh = _labelled({"pass": 70, "fail": 50}, verdict=True)
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, [*dev, *fresh])})
    cache = tmp_path / "cache"
    evaluated = cli(["judges", "eval", str(recipe)], env={"INTROSPECTION_CACHE_DIR": str(cache)})
    assert evaluated.returncode == 0, evaluated.stderr
    from scipy.stats import beta

    planned = oracle_plan(float(beta.ppf(0.2, 30.5, 0.5)), 0.8, JOINT)
    assert 30 < planned < 50
    result = _split(cli, recipe, "--fill-test", "--seed", "3", cache=cache)
    assert result.returncode == 0, result.stderr
    # Then the rest by --ratios 20:40:40 of all the label's rows: 40 of the 100 pass rows
    # belong in test, so 7 more go there; 32 of the 80 fail rows, fewer than the plan's.
    assert planned == 33
    assert ("--fill-test: test rows after it, against the plan (`judges plan`): pass: 40, the "
            "plan's 33 met; fail: 33, the plan's 33 met") in result.stdout
    after = rows_of(calibration(recipe))
    for label, count in (("pass", 70), ("fail", 50)):
        waiting = [r for r in fresh if r["expected"] == label]
        first = set(_order(3, waiting)[:planned])
        test = {str(r["source"]["conversation_id"]) for r in after  # type: ignore[index]
                if r["split"] == "test" and r["expected"] == label}
        assert first <= test  # the first of the seeded order went to test
        # The rest by --ratios 20:40:40 of all rows of the label: test is past its share.
        rest = Counter(r["split"] for r in after if r["expected"] == label
                       and str(r["source"]["conversation_id"]) not in first  # type: ignore[index]
                       and not str(r["source"]["conversation_id"]).startswith("d_"))  # type: ignore[index]
        assert sum(rest.values()) == count - planned and set(rest) <= {"train", "dev", "test"}


def test_fill_test_without_enough_labels_says_how_many_are_missing(
        tmp_path: Path, cli: Cli) -> None:
    # No dev figures: the plan assumes 0.9 (142 test rows of each class).
    recipe = write_recipe(tmp_path / "r", {"helpful": (
        UNGATED_JUDGE, _labelled({"pass": 20, "fail": 10}))})
    result = _split(cli, recipe, "--fill-test")
    assert result.returncode == 0, result.stderr
    assert Counter(r["split"] for r in rows_of(calibration(recipe))) == {"test": 30}
    assert ("pass: 20 of the 142 planned, 122 more to label; fail: 10 of the 142 planned, "
            "132 more to label") in result.stdout
