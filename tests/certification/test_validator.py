"""A certificate is a checked claim (issue 21 item 1; issue 20 item 7), end to end and unit.

The end-to-end cases hand-write certificates the way a forger would, in the test's
temporary directory; the unit cases mutate a certificate built by the same code
``judges certify`` uses.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from introspection_cli.certification.certificate import (
    Certificate,
    RateRecord,
    Sequential,
    read_certificate,
)
from introspection_cli.certification.exposure import Exposure
from introspection_cli.certification.validator import intrinsic_problem
from introspection_cli.statistics import wilson_interval
from tests.certification.test_certify_cli import _recipe, _rows, certify, check
from tests.conftest import run_cli
from tests.evaluation.conftest import fixture_row
from tests.evaluation.stub_model_server import StubModelServer


def _forge(genuine: dict[str, Any], **changes: Any) -> dict[str, Any]:
    forged = json.loads(json.dumps(genuine))
    forged.update(changes)
    return forged


@pytest.fixture
def half_judge(tmp_path: Path, stub: StubModelServer) -> tuple[Path, dict[str, Any]]:
    """A judge at TPR 8/16 (not certified), and the certificate its run would have made."""
    root = _recipe(tmp_path / "r", _rows(16, 16, wrong_passes=8))
    result = certify(root, tmp_path / "cache", "--format", "json")
    assert result.returncode == 1 and json.loads(result.stdout)["tpr"]["value"] == 0.5
    # What the run would have written: certify a perfect twin in another directory and keep
    # its identity, then put in this run's real outcomes and the real exposure.
    twin = _recipe(tmp_path / "twin", _rows(16, 16))
    assert certify(twin, tmp_path / "cache").returncode == 0
    genuine = json.loads((twin / "judges" / "helpful.certificate.json").read_text())
    return root, genuine


def _write(root: Path, certificate: dict[str, Any]) -> None:
    (root / "judges" / "helpful.certificate.json").write_text(json.dumps(certificate))


def test_a_forged_certificate_claiming_tpr_1_for_a_half_judge_fails_check(
        half_judge: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    root, twin = half_judge
    # The forger copies a good certificate of the same judge over the bad one: its rows
    # are not this split's rows, so it certifies nothing here.
    _write(root, twin)
    report = check(root, "--require-certified")
    assert report["returncode"] == 1
    codes = {d["code"] for d in report["diagnostics"]}
    assert "judge-not-certified" in codes
    estimate = run_cli(["judges", "estimate", str(root), "--judge", "helpful", "--passed",
                        "50", "--total", "100"],
                       env={"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache")})
    assert estimate.returncode == 1 and "no valid certificate" in estimate.stderr


def test_forged_outcomes_are_not_the_run_the_exposure_file_recorded(
        half_judge: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    root, twin = half_judge
    calibration = [json.loads(line) for line in
                   (root / "judges" / "helpful.calibration.jsonl").read_text().splitlines()]
    lines = sorted(f"{row['snapshot_hash']} {row['expected']}\n" for row in calibration)
    digest = "sha256:" + hashlib.sha256("".join(lines).encode()).hexdigest()
    outcomes = [[row["judge_input"]["conversation_id"], row["expected"]] for row in calibration]
    (look,) = [json.loads(line) for line in
               (root / "judges" / "helpful.exposure.jsonl").read_text().splitlines()]
    forged = _forge(twin, rows_digest=digest, outcomes=outcomes, certified_at=look["at"])
    _write(root, forged)
    report = check(root)
    (invalid,) = [d for d in report["diagnostics"] if d["code"] == "certificate-invalid"]
    assert "the run that made it is not in the judge's exposure file" in invalid["message"]
    # Forged counts on the real outcomes: the labels say otherwise.
    real = [[cid, "fail" if index < 8 else expected]
            for index, (cid, expected) in enumerate(outcomes)]
    _write(root, _forge(forged, outcomes=real))
    report = check(root)
    (invalid,) = [d for d in report["diagnostics"] if d["code"] == "certificate-invalid"]
    assert ("rows labelled pass were judged 8 pass, 8 fail, it states 16 pass"
            in invalid["message"])


def test_a_certificate_below_the_bar_floor_fails_check_unless_min_bar(
        tmp_path: Path, stub: StubModelServer) -> None:
    # Issue 20 item 7: a certificate made with --bar 0.7 (or 0.5) passed CI silently.
    root = _recipe(tmp_path / "r", _rows(16, 16))
    made = certify(root, tmp_path / "cache", "--bar", "0.7")
    assert made.returncode == 0, made.stderr
    assert "reports this certificate invalid unless run with --min-bar 0.7" in made.stderr
    report = check(root, "--require-certified")
    assert report["returncode"] == 1
    (invalid,) = [d for d in report["diagnostics"] if d["code"] == "certificate-invalid"]
    assert "certified at bar 0.7, below the 0.8" in invalid["message"]
    assert check(root, "--require-certified", "--min-bar", "0.7")["returncode"] == 0
    assert run_cli(["check", str(root), "--min-bar", "1.5"]).returncode == 2


def test_check_notes_a_certificate_made_with_several_samples(
        tmp_path: Path, stub: StubModelServer) -> None:
    root = _recipe(tmp_path / "r", _rows(16, 16))
    assert certify(root, tmp_path / "cache", "--samples", "3").returncode == 0
    result = run_cli(["check", str(root), "--require-certified"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert ("note: " in result.stderr and "certified as a majority of 3 calls; a deployment "
            "making one call is not what was certified" in result.stderr)


def test_status_shows_what_check_decides(half_judge: tuple[Path, dict[str, Any]],
                                         tmp_path: Path) -> None:
    root, twin = half_judge
    _write(root, _forge(twin, bar=0))
    result = run_cli(["judges", "status", str(root), "--format", "json"],
                     env={"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache")})
    certificate = json.loads(result.stdout)["judges"][0]["certificate"]
    assert certificate["state"] == "invalid" and "its bar 0 is no bar" in certificate["problem"]


# --- the validator on a certificate built as certify builds it -----------------------


def _certificate(tmp_path: Path, stub: StubModelServer) -> Certificate:
    root = _recipe(tmp_path / "unit", _rows(30, 18, wrong_passes=1))
    assert certify(root, tmp_path / "cache").returncode == 0
    read = read_certificate(root / "judges" / "helpful.certificate.json")
    assert isinstance(read, Certificate)
    return read


def test_what_certify_writes_is_valid_and_reads_back_the_same(
        tmp_path: Path, stub: StubModelServer) -> None:
    certificate = _certificate(tmp_path, stub)
    assert intrinsic_problem(certificate) is None
    assert Certificate.from_json(certificate.as_json()) == certificate
    assert certificate.confusion["pass"] == {"pass": 29, "fail": 1, "not_applicable": 0,
                                             "gated": 0, "error": 0}
    interval = wilson_interval(29, 30)
    assert interval is not None and certificate.tpr.low == interval.low


_EDITS = {
    "tpr.low": lambda c, d: replace(c, tpr=replace(c.tpr, low=c.tpr.low + d)),
    "tpr.high": lambda c, d: replace(c, tpr=replace(c.tpr, high=min(1.0, c.tpr.high + d))),
    "tnr.value": lambda c, d: replace(c, tnr=replace(c.tnr, value=c.tnr.value - d)),
    "tnr.n": lambda c, d: replace(c, tnr=replace(c.tnr, n=c.tnr.n + 1)),
    "alpha": lambda c, d: replace(c, alpha=c.alpha / 2),
    "errors": lambda c, d: replace(c, errors=c.errors + 1),
    "n": lambda c, d: replace(c, n=c.n + 1),
}


@given(st.sampled_from(sorted(_EDITS)), st.floats(1e-6, 0.05))
def test_any_figure_that_does_not_follow_is_invalid(edit: str, delta: float) -> None:
    certificate = _built()
    assert intrinsic_problem(_EDITS[edit](certificate, delta)) is not None


def test_a_rate_stated_without_rows_and_a_bar_below_the_floor_are_invalid() -> None:
    certificate = _built()
    assert intrinsic_problem(replace(certificate, na_recall=RateRecord(1.0, 0.5, 1.0, 3)))
    assert "below the 0.8" in str(intrinsic_problem(replace(certificate, bar=0.5)))
    assert intrinsic_problem(replace(certificate, bar=0.5), min_bar=0.5) is None


@functools.cache
def _built() -> Certificate:
    """One certificate for the unit cases, built from counts (no run needed for them)."""
    tpr, tnr = wilson_interval(29, 30), wilson_interval(18, 18)
    assert tpr is not None and tnr is not None
    outcomes = ("pass", "fail", "not_applicable", "gated", "error")
    confusion = {"pass": {**dict.fromkeys(outcomes, 0), "pass": 29, "fail": 1},
                 "fail": {**dict.fromkeys(outcomes, 0), "fail": 18},
                 "not_applicable": dict.fromkeys(outcomes, 0)}
    rows = tuple([(f"p{i}", "pass" if i else "fail") for i in range(30)]
                 + [(f"f{i}", "fail") for i in range(18)])
    zero = "sha256:" + "0" * 64
    built = Certificate(
        "helpful", zero, {"instructions": zero, "gate": zero, "llm": zero, "harness": zero},
        "openai", "m", None, None, "test", 0.8, None, 0.05, 0.025, None, 1, zero, 48,
        RateRecord(tpr.value, tpr.low, tpr.high, 30),
        RateRecord(tnr.value, tnr.low, tnr.high, 18), None, 0, confusion, rows,
        Exposure(1, 1, (), (), False), None, Sequential(1), "0.1.0", "2026-01-01T00:00:00Z")
    assert intrinsic_problem(built) is None
    return built


@given(st.floats(min_value=5e-324, max_value=0.5, exclude_max=True))
def test_any_recorded_level_is_judged_never_a_crash(alpha: float) -> None:
    # A level so small that 1 - alpha rounds to 1 (a hand edit: alpha 1e-300) once made
    # `check` an internal error (the normal quantile of 1.0); it is a sentence or valid.
    problem = intrinsic_problem(replace(_built(), alpha=alpha))
    assert problem is None or isinstance(problem, str)


def test_check_judges_a_certificate_at_a_tiny_level(tmp_path: Path,
                                                    stub: StubModelServer) -> None:
    root = _recipe(tmp_path / "r", _rows(16, 16))
    assert certify(root, tmp_path / "cache").returncode == 0
    path = root / "judges" / "helpful.certificate.json"
    _write(root, _forge(json.loads(path.read_text()), alpha=1e-300))
    report = check(root, "--require-certified")
    assert report["returncode"] == 1
    (invalid,) = [d for d in report["diagnostics"] if d["code"] == "certificate-invalid"]
    assert "do not follow" in invalid["message"]


def test_a_certificate_bought_with_a_loose_error_ceiling_fails_ci(
        tmp_path: Path, stub: StubModelServer) -> None:
    rows = _rows(16, 16) + [fixture_row(f"hard_{i}", f"hi {i} FAULT:wrong-enum",
                                        expected="fail", split="test") for i in range(20)]
    root = _recipe(tmp_path / "r", rows)
    # 20 of the 36 fail rows are errors; the TNR is measured on the 16 answered. The bar has
    # a floor CI checks (0.80); so has the error ceiling (certify's default, 0.05).
    made = certify(root, tmp_path / "cache", "--max-error-rate", "0.9")
    assert made.returncode == 0, made.stderr
    assert "--max-error-rate 0.9 is above 0.05" in made.stderr
    assert check(root)["returncode"] == 0  # a valid certificate: only CI asks for more
    report = check(root, "--require-certified")
    assert report["returncode"] == 1
    [refusal] = [d for d in report["diagnostics"] if d["severity"] == "error"]
    assert refusal["code"] == "judge-not-certified"
    assert refusal["path"].endswith("judges/helpful.certificate.json")
    assert "--max-error-rate 0.9, above the 0.05" in refusal["message"]
    assert "certify it again with the default" in refusal["hint"]
