"""``judges certify`` with raters: the rows they are in conflict on are left out (never
evaluated, listed in the certificate), ``--min-rater-alpha`` refuses unreliable labels
before any call, and ``check`` recomputes the left-out rows from the annotations file
(stale when they change, invalid when the certificate contradicts itself). Through the
real SDKs against the stub model server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

from introspection_cli.annotations.record import ADJUDICATED, Annotation
from introspection_cli.resources import load_schema
from tests.certification.test_certify_cli import _codes, _recipe, _rows, certify, check
from tests.evaluation.stub_model_server import StubModelServer

AT = "2026-11-21T09:30:00Z"


def _annotate(root: Path, labels: dict[str, dict[str, str]]) -> None:
    """rater -> conversation_id -> label, for rows of the calibration file."""
    rows = {json.loads(line)["source"]["conversation_id"]: json.loads(line) for line in
            (root / "judges" / "helpful.calibration.jsonl").read_text().splitlines()}
    lines = [Annotation(cid, rows[cid]["snapshot_hash"], rater, label, None, AT).line()
             for rater, given in labels.items() for cid, label in given.items()]
    path = root / "judges" / "helpful.annotations.jsonl"
    existing = path.read_bytes() if path.exists() else b""
    path.write_bytes(existing + b"".join(line + b"\n" for line in lines))


def _agreeing(rows: list[dict[str, Any]]) -> dict[str, str]:
    """A rater who gives every row its label."""
    return {row["source"]["conversation_id"]: row["expected"] for row in rows}


def _certificate(root: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (root / "judges" / "helpful.certificate.json").read_text())
    return data


def test_rows_in_conflict_are_left_out_and_checked(tmp_path: Path,
                                                   stub: StubModelServer) -> None:
    rows = _rows(17, 16)
    root = _recipe(tmp_path / "r", rows)
    ben = _agreeing(rows)
    ben["test_pass_16"] = "fail"  # Ana and Ben disagree on one row
    _annotate(root, {"Ana": _agreeing(rows), "Ben": ben})
    result = certify(root, tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    assert "raters     1 row(s) in conflict left out (not evaluated): test_pass_16" \
        in result.stdout
    assert len(stub.requests) == 32  # the row in conflict is never sent
    certificate = _certificate(root)
    jsonschema.validate(certificate, load_schema("certificate"))
    assert certificate["raters"] == {"excluded": ["test_pass_16"], "min_alpha": None,
                                     "alpha": None}
    assert certificate["n"] == 32 and "test_pass_16" not in dict(certificate["outcomes"])
    assert check(root, "--require-certified")["diagnostics"] == []

    _annotate(root, {ADJUDICATED: {"test_pass_16": "pass"}})  # settled: it can be scored
    stale = check(root)
    assert _codes(stale) == ["certificate-stale"]
    assert "annotations (the rows in conflict) changed" in stale["diagnostics"][0]["message"]
    again = certify(root, tmp_path / "cache", "--format", "json")
    payload = json.loads(again.stdout)  # now scored (this look needs the anytime-valid bound)
    assert payload["rows"] == 33 and payload["raters"]["excluded"] == []
    looks = (root / "judges" / "helpful.exposure.jsonl").read_text().splitlines()
    assert looks and all("test_pass_16" not in look for look in looks)  # never seen in test


def test_min_rater_alpha_refuses_unreliable_labels_before_any_call(
        tmp_path: Path, stub: StubModelServer) -> None:
    rows = _rows(16, 16)
    root = _recipe(tmp_path / "r", rows)
    coin = {row["source"]["conversation_id"]: ("pass" if i % 2 else "fail")
            for i, row in enumerate(rows)}  # Ben's labels have nothing to do with Ana's
    _annotate(root, {"Ana": _agreeing(rows), "Ben": coin})
    refused = certify(root, tmp_path / "cache", "--min-rater-alpha", "0.6")
    assert refused.returncode == 1
    assert "not certified: the raters' Krippendorff alpha is" in refused.stderr
    assert "below --min-rater-alpha 0.6" in refused.stderr
    assert stub.requests == [] and not (root / "judges" / "helpful.certificate.json").exists()


def test_min_rater_alpha_is_recorded_and_checked(tmp_path: Path,
                                                 stub: StubModelServer) -> None:
    rows = _rows(16, 16)
    root = _recipe(tmp_path / "r", rows)
    _annotate(root, {"Ana": _agreeing(rows), "Ben": _agreeing(rows)})
    result = certify(root, tmp_path / "cache", "--min-rater-alpha", "0.5")
    assert result.returncode == 0, result.stderr
    raters = _certificate(root)["raters"]
    assert raters["min_alpha"] == 0.5 and raters["alpha"]["value"] == 1.0
    assert raters["alpha"]["low"] <= 1.0 <= raters["alpha"]["high"]
    assert raters["alpha"]["units"] == 32 and raters["alpha"]["draws"] >= 1000
    assert check(root)["diagnostics"] == []
    path = root / "judges" / "helpful.certificate.json"
    original = path.read_text()
    for forged, says in ((original.replace('"min_alpha": 0.5', '"min_alpha": 1.0')
                          .replace('"low": 1.0', '"low": 0.99'),
                          "does not reach its own --min-rater-alpha 1"),
                         (original.replace('"excluded": []', '"excluded": ["test_pass_0"]'),
                          "both scores and excludes conversation test_pass_0")):
        path.write_text(forged)
        invalid = check(root)
        assert _codes(invalid) == ["certificate-invalid"], invalid
        assert says in invalid["diagnostics"][0]["message"]
