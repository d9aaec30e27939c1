"""Every fixtures/invalid/<case>/ produces exactly the diagnostics in its expected.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, run_cli

CASES = sorted(p.parent for p in (FIXTURES / "invalid").glob("*/expected.json"))


def _key(d: dict[str, object]) -> tuple[object, ...]:
    return (d["path"], d["line"], d["code"], d["severity"])


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_produces_exactly_its_expected_diagnostics(case: Path) -> None:
    expected = json.loads((case / "expected.json").read_text())["diagnostics"]
    result = run_cli(["check", ".", "--format", "json"], cwd=case)
    assert "Traceback" not in result.stderr
    report = json.loads(result.stdout)
    actual = report["diagnostics"]
    assert sorted(map(_key, actual)) == sorted(map(_key, expected)), result.stdout
    for want in expected:
        if want.get("column") is not None:
            assert any(_key(got) == _key(want) and got["column"] == want["column"]
                       for got in actual), (want, actual)
    errors = sum(d["severity"] == "error" for d in expected)
    assert result.returncode == (1 if errors else 0)
    assert report["summary"] == {"errors": errors, "warnings": len(expected) - errors}


def test_every_case_has_a_message_and_hint_free_of_tracebacks() -> None:
    assert len(CASES) >= 30
