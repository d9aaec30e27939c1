"""Exposure is recorded in the recipe (issue 20 item 6), end to end through the real SDKs.

Each way the old ledger was defeated is a case here, and each ends with ``check
--require-certified`` failing: moving the misjudged test rows to dev, relabelling
them, a new ``--samples``, another cache directory, a re-roll, and a certificate
issued with the warning. Every certificate is written by the test from the stub.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from introspection_cli.certification.exposure import (
    Look,
    SeenRow,
    derive_exposure,
    outcomes_digest,
)
from introspection_cli.certification.exposure_file import parse_looks, read_looks
from tests.certification.anytime_oracle import oracle_lower
from tests.certification.test_certify_cli import _recipe, _rows, certify, check
from tests.conftest import run_cli
from tests.evaluation.conftest import GATED_JUDGE, fixture_row, write_recipe
from tests.evaluation.stub_model_server import StubModelServer

FP_A, FP_B = "sha256:" + "a" * 64, "sha256:" + "b" * 64
HASH = "sha256:" + "c" * 64


def _look(fingerprint: str, rows: list[tuple[str, str]], digest: str = "d",
          samples: int | None = 1) -> Look:
    return Look("2026-01-01T00:00:00Z", fingerprint, samples, None,
                tuple(SeenRow(cid, HASH, label) for cid, label in rows),
                "sha256:" + digest * 64, "0.1.0")


def test_derive_counts_procedures_moves_relabels_and_rerolls() -> None:
    now = {"a": (HASH, "pass"), "b": (HASH, "fail")}
    first = _look(FP_A, [("a", "pass"), ("b", "fail")])
    assert derive_exposure([first], now).clean
    # More rows under one procedure: still clean (the second look adds c).
    grown = _look(FP_A, [("a", "pass"), ("b", "fail"), ("c", "pass")], "e")
    assert derive_exposure([first, grown], {**now, "c": (HASH, "pass")}).clean
    # c was seen in test and is now gone: moved.
    assert derive_exposure([first, grown], now).moved == ("c",)
    # b relabelled after being seen.
    assert derive_exposure([first], {**now, "b": (HASH, "pass")}).relabelled == ("b",)
    # The same procedure on the same rows with another outcome digest: a re-roll.
    assert derive_exposure([first, _look(FP_A, [("a", "pass"), ("b", "fail")], "f")],
                           now).rerolled
    # Another fingerprint, or the same one with another number of samples: procedures.
    assert derive_exposure([first, _look(FP_B, [("a", "pass")])], now).procedures == 2
    assert derive_exposure([first, _look(FP_A, [("a", "pass")], samples=3)],
                           now).procedures == 2
    # A look that saw none of the rows now in test does not count (all rows replaced).
    old = _look(FP_B, [("x", "pass"), ("y", "fail")])
    exposure = derive_exposure([old, first], now)
    assert exposure.clean and exposure.looks == 1


def test_a_migrated_look_joins_its_fingerprints_procedure() -> None:
    migrated = Look("2026-01-01T00:00:00Z", FP_A, None, None, (SeenRow("a", None, None),),
                    "sha256:" + "d" * 64, "0.1.0", "/cache/evaluations.sqlite3")
    now = {"a": (HASH, "pass")}
    assert derive_exposure([migrated, _look(FP_A, [("a", "pass")])], now).procedures == 1
    assert derive_exposure([migrated, _look(FP_B, [("a", "pass")])], now).procedures == 2
    assert derive_exposure([migrated], now).relabelled == ()  # no label was recorded


def test_eval_records_each_look_at_test_and_warns_on_the_second_rubric(
        tmp_path: Path, stub: StubModelServer) -> None:
    rows = [fixture_row("conv_t", "refund VERDICT:pass", expected="pass", split="test"),
            fixture_row("conv_d", "refund VERDICT:pass", expected="pass", split="dev")]
    root = write_recipe(tmp_path / "r", {"billing": (GATED_JUDGE, rows)})
    exposure_file = root / "judges" / "billing.exposure.jsonl"
    env = {"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache")}
    default = run_cli(["judges", "eval", str(root)], env=env)  # test held out: no look
    assert default.returncode == 0 and not exposure_file.exists()
    first = run_cli(["judges", "eval", str(root), "--split", "test"], env=env)
    assert first.returncode == 0, first.stderr
    assert "not fresh" not in first.stderr
    (look,) = read_looks(exposure_file)
    assert [row.conversation_id for row in look.rows] == ["conv_t"]
    assert (look.samples, look.rows[0].expected) == (1, "pass")
    gated = run_cli(["judges", "eval", str(root), "--threshold-split", "test",
                     "--min-agreement", "0.01"], env=env)
    assert len(read_looks(exposure_file)) == 2, gated.stderr  # --threshold-split test looks
    judge_file = root / "judges" / "billing.yaml"
    judge_file.write_text(judge_file.read_text().replace("billing request", "refund request"))
    second = run_cli(["judges", "eval", str(root), "--split", "test"], env=env)
    assert second.returncode == 0, second.stderr  # a warning, not a failure
    assert ("warning: judge billing: its test rows are no longer fresh: 2 procedures") \
        in second.stderr
    assert "optimistic" in second.stderr
    assert check(root)["diagnostics"] == []  # the file check validates is valid


def test_estimate_from_a_reports_test_split_is_a_look(tmp_path: Path,
                                                      stub: StubModelServer) -> None:
    root = _recipe(tmp_path / "r", _rows(16, 16))
    env = {"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache")}
    report = tmp_path / "report.json"
    run_cli(["judges", "eval", str(root), "--split", "test", "--output", str(report)], env=env)
    exposure_file = root / "judges" / "helpful.exposure.jsonl"
    assert len(read_looks(exposure_file)) == 1
    estimated = run_cli(["judges", "estimate", str(root), "--judge", "helpful", "--report",
                         str(report), "--split", "test", "--passed", "50", "--total", "100"],
                        env=env)
    assert estimated.returncode == 0, estimated.stderr
    looks = read_looks(exposure_file)
    assert len(looks) == 2 and looks[0].outcomes_digest == looks[1].outcomes_digest


def _not_certified(report: dict[str, Any]) -> str:
    (found,) = [d for d in report["diagnostics"] if d["code"] == "judge-not-certified"]
    assert report["returncode"] == 1
    return str(found["message"])


def _move_to_dev(root: Path, ids: set[str]) -> None:
    calibration = root / "judges" / "helpful.calibration.jsonl"
    lines = calibration.read_text().splitlines(keepends=True)
    calibration.write_text("".join(
        line.replace('"split": "test"', '"split": "dev"')
        if json.loads(line)["judge_input"]["conversation_id"] in ids else line
        for line in lines))


def test_moving_the_misjudged_test_rows_to_dev_is_seen(tmp_path: Path,
                                                       stub: StubModelServer) -> None:
    # TPR 28/30 misses 0.80 (Wilson lower bound 0.787); the two misjudged rows moved to dev
    # make it 28/28: certified at this second look even by the anytime-valid bound (0.827),
    # but the exposure records both rows as moved.
    root = _recipe(tmp_path / "r", _rows(30, 30, wrong_passes=2))
    assert certify(root, tmp_path / "cache").returncode == 1
    _move_to_dev(root, {"test_pass_0", "test_pass_1"})
    again = certify(root, tmp_path / "cache", "--format", "json")
    assert again.returncode == 0, again.stderr
    payload = json.loads(again.stdout)
    assert payload["sequential"] == {"looks": 2, "method": "beta-binomial"}
    assert payload["tpr"]["low"] == pytest.approx(oracle_lower(28, 28, 0.025), abs=1e-9)
    assert round(payload["tpr"]["low"], 3) == 0.827
    assert payload["exposure"]["moved"] == ["test_pass_0", "test_pass_1"]
    assert "exposure is not clean" in again.stderr
    message = _not_certified(check(root, "--require-certified"))
    assert "its test rows' exposure is not clean (2 row(s) seen in test, then moved out" \
        in message


def test_relabelling_the_misjudged_test_rows_is_seen(tmp_path: Path,
                                                     stub: StubModelServer) -> None:
    root = _recipe(tmp_path / "r", _rows(30, 30, wrong_passes=2))
    assert certify(root, tmp_path / "cache").returncode == 1
    calibration = root / "judges" / "helpful.calibration.jsonl"
    lines = calibration.read_text().splitlines(keepends=True)
    lines[:2] = [line.replace('"expected": "pass"', '"expected": "fail"') for line in lines[:2]]
    calibration.write_text("".join(lines))
    again = certify(root, tmp_path / "cache", "--format", "json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["exposure"]["relabelled"] == ["test_pass_0", "test_pass_1"]
    assert "2 row(s) relabelled after being seen" in _not_certified(
        check(root, "--require-certified"))


def test_more_samples_is_another_procedure(tmp_path: Path, stub: StubModelServer) -> None:
    root = _recipe(tmp_path / "r", _rows(16, 16))
    assert certify(root, tmp_path / "cache").returncode == 0
    assert check(root, "--require-certified")["returncode"] == 0
    again = certify(root, tmp_path / "cache", "--samples", "3", "--format", "json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["exposure"]["procedures"] == 2
    assert "2 procedures" in _not_certified(check(root, "--require-certified"))


def test_another_cache_directory_no_longer_forgets(tmp_path: Path,
                                                  stub: StubModelServer) -> None:
    root = _recipe(tmp_path / "r", _rows(16, 16))
    looked = run_cli(["judges", "eval", str(root), "--split", "test"],
                     env={"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache-a")})
    assert looked.returncode == 0, looked.stderr
    judge_file = root / "judges" / "helpful.yaml"
    judge_file.write_text(judge_file.read_text().replace("helped", "assisted"))
    fresh = certify(root, tmp_path / "cache-b", "--format", "json")
    assert fresh.returncode == 0, fresh.stderr
    assert json.loads(fresh.stdout)["exposure"]["procedures"] == 2
    assert "2 procedures" in _not_certified(check(root, "--require-certified"))


def test_a_re_roll_without_the_cache_is_seen(tmp_path: Path, stub: StubModelServer) -> None:
    # FAULT:alternate answers pass, then fail, to the same prompt. The first run misjudges
    # the two flaky fail rows (TNR 24/26, not certified); run again without the cache, the
    # same procedure on the same rows gives other outcomes and 26/26 certifies (even by the
    # anytime-valid bound of a second look): a re-roll.
    rows = [*_rows(24, 24), *(fixture_row(f"flaky{i}", f"hi {i} FAULT:alternate",
                                          expected="fail", split="test") for i in range(2))]
    root = _recipe(tmp_path / "r", rows)
    assert certify(root, tmp_path / "cache", "--no-cache").returncode == 1
    again = certify(root, tmp_path / "cache", "--no-cache", "--format", "json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["exposure"]["rerolled"] is True
    assert "re-roll" in _not_certified(check(root, "--require-certified"))


def test_a_re_roll_with_one_more_row_labelled_is_still_a_re_roll(
        tmp_path: Path, stub: StubModelServer) -> None:
    # The same re-roll, but one fresh test row is labelled between the runs: the rows are no
    # longer the same set, yet the flaky row was judged again by the same procedure and came
    # out otherwise. Adding rows must not launder a re-roll into a clean exposure.
    # 24 rows of each plus two flaky fail rows: enough for the anytime-valid bound the
    # second look is decided with.
    rows = [*_rows(24, 24), *(fixture_row(f"flaky{i}", f"hi {i} FAULT:alternate",
                                          expected="fail", split="test") for i in range(2))]
    root = _recipe(tmp_path / "r", rows)
    assert certify(root, tmp_path / "cache-a").returncode == 1
    calibration = root / "judges" / "helpful.calibration.jsonl"
    with calibration.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(fixture_row("fresh", "hi VERDICT:fail", expected="fail",
                                            split="test")) + "\n")
    again = certify(root, tmp_path / "cache-b", "--format", "json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["exposure"]["rerolled"] is True
    assert "re-roll" in _not_certified(check(root, "--require-certified"))
    # judges status reads the same: the certificate lists the newest look's outcomes.
    status = run_cli(["judges", "status", str(root)],
                     env={"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache-b")})
    assert "re-roll" in status.stdout, status.stdout


def test_derive_sees_a_re_roll_inside_a_larger_look() -> None:
    now = {"a": (HASH, "pass"), "b": (HASH, "fail"), "c": (HASH, "pass")}
    first = _look(FP_A, [("a", "pass"), ("b", "fail")], "d")
    grown = _look(FP_A, [("a", "pass"), ("b", "fail"), ("c", "pass")], "e")
    # The outcomes of the newest look are known to whoever made it (certify, eval) or
    # listed in the certificate: on a and b they must give the first look's digest.
    same = outcomes_digest([("a", "pass"), ("b", "fail")])
    kept = replace(first, outcomes_digest=same)
    latest = {"a": "pass", "b": "fail", "c": "pass"}
    assert not derive_exposure([kept, grown], now, latest=latest).rerolled
    assert derive_exposure([kept, grown], now, latest={**latest, "b": "pass"}).rerolled
    # Another procedure's look is not compared: its outcomes may differ by right.
    other = replace(kept, samples=3)
    assert not derive_exposure([other, grown], now, latest={**latest, "b": "pass"}).rerolled


def test_a_certificate_issued_with_the_warning_needs_a_stated_reason(
        tmp_path: Path, stub: StubModelServer) -> None:
    root = _recipe(tmp_path / "r", _rows(30, 30, wrong_passes=2))
    certify(root, tmp_path / "cache")
    _move_to_dev(root, {"test_pass_0", "test_pass_1"})
    warned = certify(root, tmp_path / "cache")
    assert warned.returncode == 0 and "--accept-exposure" in warned.stderr
    assert _not_certified(check(root, "--require-certified"))
    accepted = certify(root, tmp_path / "cache", "--accept-exposure",
                       "the two rows were mislabelled duplicates; reviewed in PR 12")
    assert accepted.returncode == 0, accepted.stderr
    certificate = json.loads((root / "judges" / "helpful.certificate.json").read_text())
    assert certificate["accepted_exposure"].startswith("the two rows were mislabelled")
    result = run_cli(["check", str(root), "--require-certified"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "accepted: the two rows were mislabelled duplicates; reviewed in PR 12" \
        in result.stderr


def test_check_validates_every_line_of_an_exposure_file(tmp_path: Path) -> None:
    root = _recipe(tmp_path / "r", _rows(1, 1))
    good = json.dumps(_look(FP_A, [("a", "pass")]).as_json())
    (root / "judges" / "helpful.exposure.jsonl").write_text(
        good + "\n" + good.replace('"pass"]', '"maybe"]') + "\n\n{not json\n")
    report = check(root)
    found = [(d["line"], d["message"]) for d in report["diagnostics"]
             if d["code"] == "exposure-invalid"]
    assert [line for line, _ in found] == [2, 3, 4]
    assert "'maybe' is not a label" in found[0][1]
    assert report["returncode"] == 1
    assert "file-ignored" not in [d["code"] for d in report["diagnostics"]]


def test_a_broken_exposure_file_refuses_certify_before_any_call(
        tmp_path: Path, stub: StubModelServer) -> None:
    root = _recipe(tmp_path / "r", _rows(16, 16))
    exposure_file = root / "judges" / "helpful.exposure.jsonl"
    exposure_file.write_text("{not json\n")
    result = certify(root, tmp_path / "cache")
    assert result.returncode == 1
    assert "helpful.exposure.jsonl:1" in result.stderr and "Traceback" not in result.stderr
    assert stub.requests == []
    assert exposure_file.read_text() == "{not json\n"  # never rewritten


def test_appending_keeps_every_byte_and_the_mode(tmp_path: Path,
                                                 stub: StubModelServer) -> None:
    root = _recipe(tmp_path / "r", _rows(16, 16))
    exposure_file = root / "judges" / "helpful.exposure.jsonl"
    earlier = json.dumps(_look(FP_B, [("somewhere_else", "pass")]).as_json(), indent=None)
    exposure_file.write_text(earlier)  # no final newline
    os.chmod(exposure_file, 0o640)
    assert certify(root, tmp_path / "cache").returncode == 0
    content = exposure_file.read_bytes()
    assert content.startswith(earlier.encode() + b"\n")
    looks, problems = parse_looks(content)
    assert len(looks) == 2 and problems == []
    assert os.stat(exposure_file).st_mode & 0o777 == 0o640
    assert not list((root / "judges").glob(".*.tmp"))


def test_a_look_that_cannot_be_recorded_is_a_warning_for_eval_and_refuses_certify(
        tmp_path: Path, stub: StubModelServer) -> None:
    root = _recipe(tmp_path / "r", _rows(16, 16))
    (root / "judges" / "helpful.exposure.jsonl").mkdir()
    env = {"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache")}
    evaluated = run_cli(["judges", "eval", str(root), "--split", "test"], env=env)
    assert evaluated.returncode == 0, evaluated.stderr
    assert "warning: judge helpful:" in evaluated.stderr and "not an exposure file" \
        in evaluated.stderr
    refused = certify(root, tmp_path / "cache")
    assert refused.returncode == 1 and "not an exposure file" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert not (root / "judges" / "helpful.certificate.json").exists()
