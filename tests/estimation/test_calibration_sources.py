"""Where estimate's calibration comes from: a certificate, or a report.

A certificate gives ``confusion`` by label and outcome over the certified rows,
read through the one certificate validator that ``check`` and ``status`` use (a
version 1 certificate is stale there: certify again).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from introspection_cli.errors import DataError
from introspection_cli.estimation.counts import Confusion
from introspection_cli.evaluation.plan import load_valid_recipe
from introspection_cli.recipe.model import Judge
from introspection_cli.recipe.selection import named_judge
from introspection_cli.workflows.estimate_calibration import calibration_for
from tests.conftest import run_cli
from tests.evaluation.conftest import UNGATED_JUDGE, fixture_row, write_recipe
from tests.evaluation.stub_model_server import StubModelServer


def _rows(split: str) -> list[dict[str, Any]]:
    """Test rows the stub judges as their marker says: some pass rows not_applicable."""
    rows = [fixture_row(f"p{i}", f"p {i} VERDICT:{'not_applicable' if i < 3 else 'pass'}",
                        expected="pass", split=split) for i in range(40)]
    rows += [fixture_row(f"f{i}", f"f {i} VERDICT:{'pass' if i < 2 else 'fail'}",
                         expected="fail", split=split) for i in range(40)]
    return rows


def _judge(root: Path) -> Judge:
    recipe, _ = load_valid_recipe(root, ["helpful"])
    return named_judge(recipe, "helpful")


def test_a_certificate_gives_every_outcome_it_certified(tmp_path: Path,
                                                         stub: StubModelServer) -> None:
    """The certificate's confusion (label x outcome over the certified rows), read through
    the one certificate validator, is the calibration estimate corrects with."""
    root = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, _rows("test"))})
    certified = run_cli(["judges", "certify", str(root), "--judge", "helpful", "--bar", "0.8"],
                        env={"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache")})
    assert certified.returncode == 0, certified.stdout + certified.stderr
    written = json.loads((root / "judges" / "helpful.certificate.json").read_text())
    source = calibration_for(_judge(root), None, None)
    assert source.confusion == Confusion.from_json(written["confusion"])
    assert source.confusion.verdicts("pass") == (37, 0, 3)
    assert source.source["source"] == "certificate"
    assert source.rate("pass") == {"value": 37 / 40, "n": 40}


def test_an_edited_certificate_is_no_calibration(tmp_path: Path, stub: StubModelServer) -> None:
    """A certificate whose counts were changed by hand does not reach the estimate."""
    root = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, _rows("test"))})
    run_cli(["judges", "certify", str(root), "--judge", "helpful"],
            env={"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache")})
    path = root / "judges" / "helpful.certificate.json"
    certificate = json.loads(path.read_text())
    certificate["confusion"]["pass"]["pass"] += 3
    certificate["confusion"]["pass"]["not_applicable"] -= 3
    path.write_text(json.dumps(certificate))
    with pytest.raises(DataError, match="not a valid certificate"):
        calibration_for(_judge(root), None, None)




def test_a_calibration_measured_as_a_majority_of_calls_is_said_to_be_one(
        tmp_path: Path, stub: StubModelServer) -> None:
    """The error rates of a majority of 3 calls are not those of the one call production
    makes: check notes such a certificate, and so does the estimate that corrects with it."""
    root = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, _rows("test"))})
    env = {"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache")}
    certified = run_cli(["judges", "certify", str(root), "--judge", "helpful", "--samples", "3"],
                        env=env)
    assert certified.returncode == 0, certified.stdout + certified.stderr
    from_certificate = calibration_for(_judge(root), None, None)
    assert any("majority of 3 calls" in warning for warning in from_certificate.warnings)
    report = tmp_path / "report.json"
    run_cli(["judges", "eval", str(root), "--split", "test", "--samples", "3", "--output",
             str(report)], env=env)
    from_report = calibration_for(_judge(root), report, "test")
    assert any("majority of 3 calls" in warning for warning in from_report.warnings)
