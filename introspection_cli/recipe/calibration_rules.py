"""``check`` rules for ``judges/<name>.calibration.jsonl`` files (SPEC §2.3).

Runs inside ``introspection check`` on every commit, so it imports only the
standard library and the fixture module (no jsonschema, Jinja2 or model SDKs).
"""

from __future__ import annotations

from collections.abc import MutableSet
from pathlib import Path

from introspection_cli.diagnostics import Diagnostic, Severity
from introspection_cli.errors import DataError
from introspection_cli.fixture import WARNING_CODES, LineResult, verify_calibration_file
from introspection_cli.fixture.codes import BLANK_LINE


def calibration_diagnostics(path: Path, display_path: str, *,
                            units: MutableSet[tuple[str, str]] | None = None
                            ) -> tuple[list[Diagnostic], int]:
    """Verify one calibration file: its diagnostics, in line order, and how many rows it holds.

    ``units``, when given, receives the (conversation_id, snapshot_hash) of every trusted
    row (what the annotation rules check annotations against, in the same pass).

    ``line`` is the row's line number, ``column`` 1. ``fixture-unlabelled`` and
    ``fixture-blank-line`` are warnings, every other code an error. The
    fixture module's messages already say what to do, so there is no separate hint.
    A blank line is not a row; an object spread over several lines is one.
    """
    found: list[Diagnostic] = []
    rows = 0
    try:
        # Consumed one line at a time: only the diagnostics are kept, never the rows.
        for result in verify_calibration_file(path):
            found.extend(_line_diagnostics(result, display_path))
            if units is not None and result.row is not None:
                units.add((result.row.conversation_id, result.row.snapshot_hash))
            rows += not (result.row is None and len(result.rejections) == 1
                         and result.rejections[0].code == BLANK_LINE)
    except DataError as exc:
        return [Diagnostic(display_path, None, None, Severity.ERROR, "file-unreadable",
                           str(exc), "check its permissions")], rows
    return found, rows


def _line_diagnostics(result: LineResult, display_path: str) -> list[Diagnostic]:
    return [Diagnostic(display_path, rejection.line, 1,
                       Severity.WARNING if rejection.code in WARNING_CODES else Severity.ERROR,
                       rejection.code, rejection.message)
            for rejection in result.rejections]
