"""A hand-edited certificate's fields that must follow from the rest of it: the model
and provider named against the fingerprint, an interval that does not hold its value,
more error rows than rows. Each is refused by the one validator check, status and
estimate share."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from introspection_cli.certification.certificate import Certificate, read_certificate
from introspection_cli.certification.validator import intrinsic_problem, llm_problem
from tests.certification.test_certify_cli import _recipe, _rows, certify, check
from tests.certification.test_validator import _built
from tests.evaluation.stub_model_server import StubModelServer


@pytest.fixture
def certified(tmp_path: Path, stub: StubModelServer) -> Path:
    root = _recipe(tmp_path / "r", _rows(16, 16))
    made = certify(root, tmp_path / "cache")
    assert made.returncode == 0, made.stderr
    assert check(root, "--require-certified")["returncode"] == 0
    return root


@pytest.mark.parametrize(("field", "value"), [
    ("model", "a-stronger-model"), ("provider", "anthropic"), ("temperature", 0.7),
])
def test_a_model_or_parameter_edited_by_hand_is_not_the_fingerprint_s(
        certified: Path, field: str, value: object) -> None:
    path = certified / "judges" / "helpful.certificate.json"
    read = read_certificate(path)
    assert isinstance(read, Certificate) and llm_problem(read) is None
    data = json.loads(path.read_text())
    data[field] = value
    path.write_text(json.dumps(data))
    edited = read_certificate(path)
    assert isinstance(edited, Certificate)
    assert "are not the ones its fingerprint was made from" in str(llm_problem(edited))
    report = check(certified, "--require-certified")
    assert report["returncode"] == 1
    (invalid,) = [d for d in report["diagnostics"] if d["code"] == "certificate-invalid"]
    assert "fingerprint was made from" in invalid["message"]


def test_an_interval_whose_low_is_above_its_high_is_invalid() -> None:
    certificate = _built()
    inverted = replace(certificate, tpr=replace(certificate.tpr, low=0.99, high=0.5))
    assert "does not hold its value" in str(intrinsic_problem(inverted))


def test_more_error_rows_than_rows_is_invalid() -> None:
    certificate = _built()
    problem = intrinsic_problem(replace(certificate, errors=certificate.n + 5))
    assert f"it counts {certificate.n + 5} error rows among only {certificate.n} rows" == problem
