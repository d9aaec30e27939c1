"""``introspection check`` on hostile input: a clear diagnostic, SPEC exit code, no traceback,
bounded time and memory, and no file changed. One parametrized case per table row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.hostile import cases_files
from tests.hostile.cases_check import ENCODING_CASES, SYMLINK_CASES, YAML_CASES, Case
from tests.hostile.harness import (
    MEMORY_CEILING_MB,
    TIME_CEILING_S,
    run_cli_measured,
    snapshot_tree,
)

CASES = [*YAML_CASES, *ENCODING_CASES, *SYMLINK_CASES, *cases_files.ALL_CASES]


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_hostile_input(case: Case, tmp_path: Path) -> None:
    args = case.build(tmp_path)
    before = snapshot_tree(tmp_path)
    fmt = ["--format", "json"] if case.json_output else []
    outcome = run_cli_measured(["check", *fmt, *args], tmp_path,
                               honour_permissions=case.honour_permissions)

    assert outcome.returncode != -9, f"killed after {TIME_CEILING_S} s: a hang"
    assert "Traceback" not in outcome.stderr, outcome.stderr[-3000:]
    assert "internal error" not in outcome.stderr, outcome.stderr[-3000:]
    assert outcome.returncode == case.exit_code, (outcome.stdout[-3000:], outcome.stderr[-3000:])
    assert outcome.peak_mb < MEMORY_CEILING_MB, f"peak memory {outcome.peak_mb:.0f} MB"
    if case.json_output:
        diagnostics = json.loads(outcome.stdout)["diagnostics"]
        codes = {d["code"] for d in diagnostics}
        assert case.codes <= codes, diagnostics[:20]
        if case.exit_code == 0:
            assert not [d for d in diagnostics if d["severity"] == "error"], diagnostics[:20]
        found = {(d["code"], d["line"], d["column"]) for d in diagnostics}
        assert case.positions <= found, diagnostics[:20]
        for diagnostic in diagnostics:
            assert len(diagnostic["message"]) < 2000, "a message must not echo the input"
    assert snapshot_tree(tmp_path) == before, "check changed a file"
