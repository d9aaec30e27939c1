"""``check`` rules for ``judges/<name>.calibration.jsonl`` files (SPEC §2.3).

Runs inside ``introspection check`` on every commit, so it imports only the
standard library and the fixture module (no jsonschema, Jinja2 or model SDKs).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from introspection_cli.diagnostics import Diagnostic, Severity
from introspection_cli.errors import DataError
from introspection_cli.fixture import WARNING_CODES, LineResult, verify_calibration_file

_REEXPORT = ("re-export the conversation with `introspection conversations get --ids-file FILE "
             "--judge-fixtures --format json` and label it again")

#: What to do about each code, shown as the diagnostic's hint.
HINTS: Mapping[str, str] = {
    "fixture-json": f"restore the line exactly as exported, or {_REEXPORT}",
    "fixture-schema-version": _REEXPORT,
    "fixture-record-type": "export calibration rows with `--judge-fixtures`; plain conversation "
                           "bundles cannot be calibrated against",
    "fixture-not-ok": f"remove the line, or {_REEXPORT}",
    "fixture-engine-version": _REEXPORT,
    "fixture-protocol-changed": f"{_REEXPORT} from a runtime this CLI speaks to, or upgrade "
                                "introspection",
    "fixture-contract-changed": f"{_REEXPORT} from a runtime this CLI speaks to, or upgrade "
                                "introspection",
    "fixture-shape": f"restore the row exactly as exported, or {_REEXPORT}",
    "fixture-extra-field": "only `expected` and `split` may be added to an exported row; "
                           "remove the other field",
    "fixture-conversation-mismatch": f"undo the edit to the conversation ids, or {_REEXPORT}",
    "fixture-hash-mismatch": "judge_input was edited after export: undo the edit (only "
                             f"`expected` and `split` may change), or {_REEXPORT}",
    "fixture-duplicate-conversation": "keep one row per conversation and delete the other lines",
    "fixture-unlabelled": 'add "expected": "pass", "fail" or "not_applicable" to the row',
    "fixture-bad-label": 'use "pass", "fail" or "not_applicable" for `expected`',
    "fixture-bad-split": 'use "train", "dev", "test" or null for `split`',
    "fixture-blank-line": "delete the blank line: every line must hold one row",
}


def calibration_diagnostics(path: Path, display_path: str) -> list[Diagnostic]:
    """Verify one calibration file and return its diagnostics, in line order.

    ``line`` is the row's line number, ``column`` 1. ``fixture-unlabelled`` and
    ``fixture-blank-line`` are warnings, every other code an error.
    """
    try:
        # Consumed one line at a time: only the diagnostics are kept, never the rows.
        return [diagnostic for result in verify_calibration_file(path)
                for diagnostic in _line_diagnostics(result, display_path)]
    except DataError as exc:
        return [Diagnostic(display_path, None, None, Severity.ERROR, "fixture-unreadable",
                           str(exc), "make the file readable, or remove it")]


def _line_diagnostics(result: LineResult, display_path: str) -> list[Diagnostic]:
    return [Diagnostic(display_path, rejection.line, 1,
                       Severity.WARNING if rejection.code in WARNING_CODES else Severity.ERROR,
                       rejection.code, rejection.message, HINTS.get(rejection.code))
            for rejection in result.rejections]
