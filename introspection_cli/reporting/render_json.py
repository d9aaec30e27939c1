"""The JSON rendering of an eval report: the report model, serialised as it is."""

from __future__ import annotations

from typing import Any

from introspection_cli.reporting.model import report_json


def render_json(report: dict[str, Any]) -> str:
    """The report as indented JSON text (the same bytes ``--output FILE`` writes)."""
    return report_json(report)
