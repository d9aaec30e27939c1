"""``check`` rules for ``judges/<name>.calibration.jsonl`` files (SPEC §2.3).

Runs inside ``introspection check`` on every commit, so it imports only the
standard library and the fixture module (no jsonschema, Jinja2 or model SDKs).
"""

from __future__ import annotations

from pathlib import Path

from introspection_cli.diagnostics import Diagnostic, Severity
from introspection_cli.errors import DataError
from introspection_cli.fixture import WARNING_CODES, LineResult, verify_calibration_file


def calibration_diagnostics(path: Path, display_path: str) -> list[Diagnostic]:
    """Verify one calibration file and return its diagnostics, in line order.

    ``line`` is the row's line number, ``column`` 1. ``fixture-unlabelled`` and
    ``fixture-blank-line`` are warnings, every other code an error. The
    fixture module's messages already say what to do, so there is no separate hint.
    """
    try:
        # Consumed one line at a time: only the diagnostics are kept, never the rows.
        return [diagnostic for result in verify_calibration_file(path)
                for diagnostic in _line_diagnostics(result, display_path)]
    except DataError as exc:
        return [Diagnostic(display_path, None, None, Severity.ERROR, "file-unreadable",
                           str(exc), "check its permissions")]


def _line_diagnostics(result: LineResult, display_path: str) -> list[Diagnostic]:
    return [Diagnostic(display_path, rejection.line, 1,
                       Severity.WARNING if rejection.code in WARNING_CODES else Severity.ERROR,
                       rejection.code, rejection.message)
            for rejection in result.rejections]
