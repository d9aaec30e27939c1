"""Every fixtures/invalid/<case>/ produces exactly the diagnostics in its expected.json.

An expected diagnostic may also pin its ``message`` and ``hint`` (``null``: no
hint), so that a case can state that the advice is right, not only that a
problem was found. A case may also hold ``expected.txt``, the exact text output
(summary line included), and ``expected.json`` a ``summary`` object, compared
whole, and ``args``, more arguments for ``check`` (``["--require-certified"]``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES, run_cli

CASES = sorted(p.parent for p in (FIXTURES / "invalid").glob("*/expected.json"))


def _key(d: dict[str, object]) -> tuple[object, ...]:
    return (d["path"], d["line"], d["code"], d["severity"])


def _matches(got: dict[str, Any], want: dict[str, Any]) -> bool:
    return _key(got) == _key(want) and all(
        got[field] == want[field] for field in ("column", "message", "hint")
        if field in want and (field != "column" or want[field] is not None))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_produces_exactly_its_expected_diagnostics(case: Path) -> None:
    expected_report = json.loads((case / "expected.json").read_text())
    expected = expected_report["diagnostics"]
    result = run_cli(["check", ".", "--format", "json", *expected_report.get("args", [])],
                     cwd=case)
    assert "Traceback" not in result.stderr
    report = json.loads(result.stdout)
    actual = report["diagnostics"]
    assert sorted(map(_key, actual)) == sorted(map(_key, expected)), result.stdout
    for want in expected:
        assert any(_matches(got, want) for got in actual), (want, actual)
    errors = sum(d["severity"] == "error" for d in expected)
    assert result.returncode == (1 if errors else 0)
    summary = {key: report["summary"][key] for key in ("errors", "warnings")}
    assert summary == {"errors": errors, "warnings": len(expected) - errors}
    if "summary" in expected_report:
        assert report["summary"] == expected_report["summary"]


TEXT_CASES = sorted(p.parent for p in (FIXTURES / "invalid").glob("*/expected.txt"))


@pytest.mark.parametrize("case", TEXT_CASES, ids=[c.name for c in TEXT_CASES])
def test_case_prints_exactly_its_expected_text(case: Path) -> None:
    result = run_cli(["check", "."], cwd=case)
    assert result.stdout == (case / "expected.txt").read_text()


def test_every_case_has_a_message_and_hint_free_of_tracebacks() -> None:
    assert len(CASES) >= 30
