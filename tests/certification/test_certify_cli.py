"""``judges certify`` and ``check``'s certificate rules, end to end through the real SDKs.

Every certificate here is written by the test, in its temporary directory, from
the scripted stub model server: it is test data, never a result.
"""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from scipy.stats import beta

from introspection_cli.resources import load_schema
from tests.certification.anytime_oracle import oracle_anytime_plan
from tests.certification.test_power import oracle_plan
from tests.conftest import run_cli
from tests.evaluation.conftest import GATED_JUDGE, UNGATED_JUDGE, fixture_row, write_recipe
from tests.evaluation.stub_model_server import StubModelServer


def _rows(passes: int, fails: int, *, wrong_passes: int = 0,
          split: str = "test") -> list[dict[str, Any]]:
    """Rows the stub judges right (``VERDICT:`` = the label), but ``wrong_passes`` pass rows
    it fails."""
    rows = [fixture_row(f"{split}_pass_{i}",
                        f"hi {i} VERDICT:{'fail' if i < wrong_passes else 'pass'}",
                        expected="pass", split=split) for i in range(passes)]
    rows += [fixture_row(f"{split}_fail_{i}", f"hi {i} VERDICT:fail", expected="fail",
                         split=split) for i in range(fails)]
    return rows


def _recipe(root: Path, rows: list[dict[str, Any]], judge: str = UNGATED_JUDGE) -> Path:
    return write_recipe(root, {"helpful": (judge, rows)})


def certify(root: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(["judges", "certify", str(root), "--judge", "helpful", "--max-retries", "0",
                    "--timeout", "5", *args], env={"INTROSPECTION_CACHE_DIR": str(cache)})


def check(root: Path, *args: str) -> dict[str, Any]:
    result = run_cli(["check", str(root), "--format", "json", *args])
    assert "Traceback" not in result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    report["returncode"] = result.returncode
    return report


def _codes(report: dict[str, Any]) -> list[str]:
    return [d["code"] for d in report["diagnostics"]]


def _stale_message(report: dict[str, Any]) -> str:
    (stale,) = [d for d in report["diagnostics"] if d["code"] == "certificate-stale"]
    return str(stale["message"])


def test_certificate_round_trip(tmp_path: Path, stub: StubModelServer) -> None:
    root = _recipe(tmp_path / "r", _rows(16, 16) + _rows(3, 3, split="dev"))
    result = certify(root, tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    assert "certified: wrote" in result.stdout
    assert len(stub.requests) == 32  # the test split only: dev rows are not evaluated
    certificate_file = root / "judges" / "helpful.certificate.json"
    certificate = json.loads(certificate_file.read_text())
    jsonschema.validate(certificate, load_schema("certificate"))
    assert (certificate["split"], certificate["n"], certificate["errors"]) == ("test", 32, 0)
    assert certificate["tpr"]["n"] == certificate["tnr"]["n"] == 16
    assert not list((root / "judges").glob(".*.tmp"))  # written atomically, nothing left

    clean = check(root, "--require-certified")
    assert clean["returncode"] == 0 and clean["diagnostics"] == []

    judge_file = root / "judges" / "helpful.yaml"
    original = judge_file.read_text()
    judge_file.write_text(original.replace("Return pass when the agent helped",
                                           "Return pass when the agent assisted"))
    edited = check(root)
    assert edited["returncode"] == 0  # a warning: the build is not broken by it
    assert _codes(edited) == ["certificate-stale"]
    assert _stale_message(edited).endswith("stale: instructions changed since it was certified")

    judge_file.write_text(original)
    assert check(root)["diagnostics"] == []  # the same judge again: valid again
    calibration = root / "judges" / "helpful.calibration.jsonl"
    lines = calibration.read_text().splitlines(keepends=True)
    lines[0] = lines[0].replace('"expected": "pass"', '"expected": "fail"')
    calibration.write_text("".join(lines))
    relabelled = check(root)
    assert _stale_message(relabelled).endswith("stale: rows changed since it was certified")
    required = check(root, "--require-certified")
    assert required["returncode"] == 1
    assert sorted(_codes(required)) == ["certificate-stale", "judge-not-certified"]


def test_an_anthropic_judge_is_certified_through_the_anthropic_sdk(
        tmp_path: Path, stub: StubModelServer) -> None:
    root = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, _rows(16, 16))},
                        provider="anthropic")
    result = certify(root, tmp_path / "cache", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert {(request.api, request.path) for request in stub.requests} == {
        ("anthropic", "/v1/messages")}
    certificate = json.loads((root / "judges" / "helpful.certificate.json").read_text())
    assert (certificate["provider"], certificate["model"]) == ("anthropic", "stub-model")
    assert check(root, "--require-certified")["diagnostics"] == []


def test_too_few_rows_is_insufficient_data_before_any_call(tmp_path: Path,
                                                           stub: StubModelServer) -> None:
    root = _recipe(tmp_path / "r", _rows(10, 20))
    result = certify(root, tmp_path / "cache", "--format", "json")
    assert result.returncode == 1
    payload = json.loads(result.stdout)
    assert payload["decision"] == "insufficient_data"
    assert payload["needed_perfect"] == {"pass": 6, "fail": 0}
    # For an 80% chance of a certificate, at an assumed 0.90 before any run: 142 test rows
    # of each class (tests/certification/test_power.py), said in labels at 20:40:40.
    assert payload["needed"] == {"pass": 132, "fail": 122}
    assert payload["plan"]["sources"] == {"pass": "TPR assumed", "fail": "TNR assumed"}
    assert stub.requests == []
    assert not (root / "judges" / "helpful.certificate.json").exists()
    text = certify(root, tmp_path / "cache")
    assert "insufficient data:" in text.stdout and "the split is short of 6 pass rows" in text.stdout
    assert "to be certified with probability 80%: 142 pass at 0.900 (TPR assumed), 132 more" \
        in text.stdout


def test_a_rejected_row_is_never_silent_and_certifies_nothing(tmp_path: Path,
                                                             stub: StubModelServer) -> None:
    # A row edited after export (its hash no longer matches) may be a test row whose
    # verdict nobody knows: no decision rests on the file until it is fixed. An
    # unlabelled row (a fresh export) is not a problem.
    tampered = json.dumps(fixture_row("edited", "hi VERDICT:pass", expected="pass",
                                      split="test")).replace("hi VERDICT", "hi there VERDICT")
    unlabelled = fixture_row("fresh", "hi VERDICT:pass", expected=None)
    root = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, [*_rows(16, 16), unlabelled,
                                                                    tampered])})
    result = certify(root, tmp_path / "cache", "--format", "json")
    assert result.returncode == 1, result.stderr
    payload = json.loads(result.stdout)
    assert payload["decision"] == "not_certified"
    assert [(r["line"], r["code"]) for r in payload["rejected"]] == [
        (34, "fixture-hash-mismatch")]
    assert "1 calibration row(s) rejected (lines 34)" in payload["reasons"][0]
    assert "judge helpful: 1 calibration row(s) rejected" in result.stderr
    assert stub.requests == []  # decided from the file, before any call
    assert not (root / "judges" / "helpful.certificate.json").exists()
    text = certify(root, tmp_path / "cache")
    assert "not certified:" in text.stdout and "seen by" not in text.stdout
    lines = (root / "judges" / "helpful.calibration.jsonl").read_text().splitlines()
    (root / "judges" / "helpful.calibration.jsonl").write_text("\n".join(lines[:-1]) + "\n")
    fixed = certify(root, tmp_path / "cache", "--format", "json")
    assert fixed.returncode == 0, fixed.stderr
    assert json.loads(fixed.stdout)["rejected"] == []


def test_a_missed_bound_is_not_certified_and_writes_nothing(tmp_path: Path,
                                                           stub: StubModelServer) -> None:
    root = _recipe(tmp_path / "r", _rows(20, 16, wrong_passes=3))
    planned = json.loads(certify(root, tmp_path / "cache", "--format", "json").stdout)
    # More rows are planned at this split's own rates, shrunk: 17 of 20 plans at 0.751, out
    # of reach at 0.80; 16 of 16 at 0.971. The next look at these rows is a second one, so
    # the plan is for the anytime-valid bound it will be decided with (the oracles: scipy's
    # binomial and incomplete beta); Wilson's would be fewer.
    tnr = float(beta.ppf(0.2, 16.5, 0.5))
    assert planned["plan"]["classes"]["pass"]["rate"] == pytest.approx(beta.ppf(0.2, 17.5, 3.5))
    assert planned["plan"]["bound"] == "beta-binomial"
    assert planned["needed"] == {"pass": None,
                                 "fail": oracle_anytime_plan(tnr, 0.8, math.sqrt(0.8)) - 16}
    assert oracle_plan(tnr, 0.8, math.sqrt(0.8), 300) < oracle_anytime_plan(
        tnr, 0.8, math.sqrt(0.8))
    # The text of a first look (a second one is insufficient data: see test_sequential).
    root = _recipe(tmp_path / "text", _rows(20, 16, wrong_passes=3))
    result = certify(root, tmp_path / "cache")
    assert result.returncode == 1
    assert "not certified:" in result.stdout and "tpr is 0.850 over 20 rows" in result.stdout
    assert "judge helpful: not certified: tpr is 0.850" in result.stderr
    assert not (root / "judges" / "helpful.certificate.json").exists()


def test_a_provider_failure_exits_3_and_writes_no_certificate(tmp_path: Path,
                                                              stub: StubModelServer) -> None:
    rows = [*_rows(16, 16), fixture_row("broken", "FAULT:500-always", expected="pass",
                                        split="test")]
    root = _recipe(tmp_path / "r", rows)
    result = certify(root, tmp_path / "cache", "--max-error-rate", "0.5")
    assert result.returncode == 3, result.stderr
    assert "no certificate was written" in result.stderr
    assert "failed at the model provider" in result.stderr
    assert not (root / "judges" / "helpful.certificate.json").exists()


def test_certify_warns_when_the_test_rows_were_seen_under_another_version(
        tmp_path: Path, stub: StubModelServer) -> None:
    root = _recipe(tmp_path / "r", _rows(16, 16))
    cache = tmp_path / "cache"
    first = certify(root, cache, "--format", "json")
    assert json.loads(first.stdout)["test_fingerprints_seen"] == 1
    judge_file = root / "judges" / "helpful.yaml"
    judge_file.write_text(judge_file.read_text().replace("helped", "assisted"))
    second = certify(root, cache, "--format", "json")
    assert second.returncode == 0
    assert json.loads(second.stdout)["test_fingerprints_seen"] == 2
    assert "optimistic" in second.stderr
    certificate = json.loads((root / "judges" / "helpful.certificate.json").read_text())
    assert certificate["exposure"]["procedures"] == 2


def test_a_gated_judge_counts_gate_misses_towards_na_recall(tmp_path: Path,
                                                           stub: StubModelServer) -> None:
    rows = [fixture_row(f"p{i}", f"refund {i} VERDICT:pass", expected="pass", split="test")
            for i in range(16)]
    rows += [fixture_row(f"f{i}", f"refund {i} VERDICT:fail", expected="fail", split="test")
             for i in range(16)]
    rows += [fixture_row(f"n{i}", "what time is it", expected="not_applicable", split="test")
             for i in range(4)]
    root = write_recipe(tmp_path / "r", {"helpful": (GATED_JUDGE.replace("billing", "helpful"),
                                                      rows)})
    result = certify(root, tmp_path / "cache", "--format", "json", "--bar-na", "0.5")
    payload = json.loads(result.stdout)
    assert payload["na_recall"]["value"] == 1.0 and payload["na_recall"]["n"] == 4
    assert payload["decision"] == "certified", payload["reasons"]
    assert len(stub.requests) == 32  # gate misses cost no call


def test_a_model_override_is_certified_but_reported_stale(tmp_path: Path,
                                                          stub: StubModelServer) -> None:
    root = _recipe(tmp_path / "r", _rows(16, 16))
    result = certify(root, tmp_path / "cache", "--model", "other-model")
    assert result.returncode == 0
    assert "reports it stale until the judge file names what was certified" in result.stderr
    assert _stale_message(check(root)).endswith(
        "stale: model or parameters changed since it was certified")


@pytest.mark.parametrize("args", [["--bar", "1"], ["--bar", "nan"], ["--split", "unsplit"],
                                  ["--max-error-rate", "2"], ["--format", "xml"]])
def test_bad_options_are_usage_errors_before_any_call(tmp_path: Path, stub: StubModelServer,
                                                      args: list[str]) -> None:
    root = _recipe(tmp_path / "r", _rows(16, 16))
    result = certify(root, tmp_path / "cache", *args)
    assert result.returncode == 2, result.stderr
    assert stub.requests == []


def test_unknown_judge_and_missing_judge_option_are_usage_errors(tmp_path: Path) -> None:
    root = _recipe(tmp_path / "r", _rows(1, 1))
    unknown = run_cli(["judges", "certify", str(root), "--judge", "nope"])
    assert unknown.returncode == 2 and "no judge named nope" in unknown.stderr
    missing = run_cli(["judges", "certify", str(root)])
    assert missing.returncode == 2 and "--judge NAME" in missing.stderr


def test_a_certificate_that_is_a_fifo_is_never_opened(tmp_path: Path) -> None:
    import os

    root = _recipe(tmp_path / "r", _rows(1, 1))
    os.mkfifo(root / "judges" / "helpful.certificate.json")
    report = check(root)
    assert "not-a-file" in _codes(report)


def test_an_error_row_is_not_scorable_so_the_split_is_insufficient(
        tmp_path: Path, stub: StubModelServer) -> None:
    # Issue 20 item 9: P->P 15, P->error 1, F->F 16 was "not certified ... below the bar"
    # with needed 0; only 15 pass rows can be scored, one short of what even a perfect
    # judge needs at 0.80.
    rows = [*_rows(15, 16), fixture_row("broken", "hi FAULT:wrong-enum", expected="pass",
                                        split="test")]
    root = _recipe(tmp_path / "r", rows)
    result = certify(root, tmp_path / "cache", "--format", "json")
    assert result.returncode == 1, result.stderr
    payload = json.loads(result.stdout)
    assert payload["decision"] == "insufficient_data"
    assert payload["errors"] == 1
    assert payload["needed_perfect"] == {"pass": 1, "fail": 0}
    assert "judge helpful: insufficient data: the split holds 15 scorable pass" in result.stderr


def test_verify_runs_the_recorded_procedure_again(tmp_path: Path,
                                                  stub: StubModelServer) -> None:
    # Issue 21 item 1: `certify --verify` re-runs what the certificate records on its rows
    # (the cache applies) and exits 1 when the decision differs.
    rows = [*_rows(16, 16), fixture_row("flaky", "hi FAULT:alternate", expected="pass",
                                        split="test")]
    root = _recipe(tmp_path / "r", rows)
    assert certify(root, tmp_path / "cache", "--samples", "3").returncode == 0
    calls = len(stub.requests)
    cached = certify(root, tmp_path / "cache", "--verify", "--format", "json")
    assert cached.returncode == 0, cached.stderr
    payload = json.loads(cached.stdout)
    assert (payload["verified"], payload["samples"], payload["changed_outcomes"]) == (
        True, 3, [])
    assert len(stub.requests) == calls  # every verdict came from the cache
    # Without the cache the flaky row now answers fail: 16 of 17 pass rows, lower bound
    # 0.73: the recorded procedure no longer certifies the judge.
    fresh = certify(root, tmp_path / "cache", "--verify", "--no-cache")
    assert fresh.returncode == 1, fresh.stderr
    assert "not verified: the recorded procedure no longer certifies it" in fresh.stdout
    assert "32 of 33 rows gave the recorded outcome" in fresh.stdout
    assert "judge helpful: not verified" in fresh.stderr


def test_verify_refuses_what_cannot_be_run_again(tmp_path: Path, stub: StubModelServer) -> None:
    root = _recipe(tmp_path / "r", _rows(16, 16))
    missing = certify(root, tmp_path / "cache", "--verify")
    assert missing.returncode == 1 and "there is no" in missing.stderr
    assert certify(root, tmp_path / "cache").returncode == 0
    judge_file = root / "judges" / "helpful.yaml"
    judge_file.write_text(judge_file.read_text().replace("helped", "assisted"))
    changed = certify(root, tmp_path / "cache", "--verify")
    assert changed.returncode == 1 and "cannot be run again" in changed.stderr
    assert certify(root, tmp_path / "cache", "--verify", "--samples", "2").returncode == 2


def test_insufficient_data_after_a_run_prints_the_measured_figures(
        tmp_path: Path, stub: StubModelServer) -> None:
    rows = [*_rows(15, 16), fixture_row("broken", "hi FAULT:wrong-enum", expected="pass",
                                        split="test")]
    root = _recipe(tmp_path / "r", rows)
    result = certify(root, tmp_path / "cache")
    assert result.returncode == 1, result.stderr
    assert "errors     1 (at most 0.05 of the rows)" in result.stdout
    assert "tpr        1.000 (0.796–1.000, 95% interval) over 15 rows" in result.stdout
    assert "tnr        1.000 (0.806–1.000, 95% interval) over 16 rows" in result.stdout
    # The plan is made at the rates this run measured (shrunk), not an assumed 0.90.
    assert "test TPR 1.000 over 15 rows, shrunk" in result.stdout
    assert "assumed" not in result.stdout


def test_a_run_whose_every_test_row_errs_blames_no_exposure(tmp_path: Path,
                                                            stub: StubModelServer) -> None:
    # Every row's reply is broken: nothing was judged, so no look was recorded. That is not
    # "certified on dev or train rows", and no test figure is optimistic: the advice is to
    # run again, not to label fresh test rows.
    rows = [fixture_row(f"t{i}", f"hi {i} FAULT:wrong-enum", expected=("pass", "fail")[i % 2],
                        split="test") for i in range(32)]
    root = _recipe(tmp_path / "r", rows)
    result = certify(root, tmp_path / "cache")
    assert result.returncode == 1, result.stderr
    assert "dev or train" not in result.stdout + result.stderr
    assert "Label fresh test rows" not in result.stderr
    assert "32 error rows left out" in result.stderr


def test_a_bar_only_millions_of_rows_reach_is_insufficient_data(tmp_path: Path,
                                                                 stub: StubModelServer) -> None:
    root = _recipe(tmp_path / "r", _rows(16, 16))
    result = certify(root, tmp_path / "cache", "--bar", "0.999999")
    assert result.returncode == 1, result.stderr
    assert "internal error" not in result.stderr
    assert "needs 3841455 of each to reach the bar 0.999999" in result.stderr
    assert not stub.requests  # decided from the labels alone
