"""Where estimate's calibration comes from: a certificate of either schema, or a report.

A schema-2 certificate (written by ``judges certify`` once certificates carry
every outcome) gives ``confusion`` by label and outcome over the certified rows;
a version-1 certificate gives only TPR and TNR with their row counts. The
certificate's own checks are ``certification.state``'s: here its verdict is
given, so that what estimate reads from each schema is what is tested.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from introspection_cli.certification import state
from introspection_cli.estimation.counts import Confusion
from introspection_cli.evaluation.plan import load_valid_recipe
from introspection_cli.recipe.model import Judge
from introspection_cli.recipe.selection import named_judge
from introspection_cli.workflows.estimate_calibration import calibration_for
from tests.evaluation.conftest import UNGATED_JUDGE, fixture_row, write_recipe

_COMMON = {"split": "test", "certified_at": "2026-12-01T00:00:00Z",
           "tpr": {"value": 0.92, "low": 0.81, "high": 0.97, "n": 50},
           "tnr": {"value": 0.88, "low": 0.76, "high": 0.94, "n": 50}}


def _judge(tmp_path: Path) -> Judge:
    root = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, [
        fixture_row("c1", "hello", expected="pass", split="test")])})
    recipe, _ = load_valid_recipe(root, ["helpful"])
    return named_judge(recipe, "helpful")


def _valid(monkeypatch: pytest.MonkeyPatch, certificate: dict[str, Any]) -> None:
    monkeypatch.setattr(state, "assess_certificate", lambda path, judge: state.CertificateState(
        "valid", path, certificate))


def test_a_schema_2_certificate_gives_every_outcome(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    confusion = {"pass": {"pass": 40, "fail": 3, "not_applicable": 7, "gated": 0, "error": 1},
                 "fail": {"pass": 4, "fail": 44, "not_applicable": 2, "gated": 1, "error": 0},
                 "not_applicable": {"pass": 1, "fail": 0, "not_applicable": 19, "gated": 2,
                                    "error": 0}}
    _valid(monkeypatch, {**_COMMON, "certificate_version": 2, "confusion": confusion})
    source = calibration_for(_judge(tmp_path), None, None)
    assert source.confusion == Confusion.from_json(confusion)
    assert source.source["source"] == "certificate"
    assert source.rate("pass") == {"value": 40 / 50, "n": 50}  # over the rows judged


def test_a_version_1_certificate_gives_the_two_class_matrix(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _valid(monkeypatch, {**_COMMON, "certificate_version": 1})
    source = calibration_for(_judge(tmp_path), None, None)
    assert source.confusion.verdicts("pass") == (46, 4, 0)
    assert source.confusion.verdicts("fail") == (6, 44, 0)
    assert source.confusion.verdicts("not_applicable") == (0, 0, 0)
    assert source.as_json()["tpr"] == {"value": 0.92, "n": 50}
