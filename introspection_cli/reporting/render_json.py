"""The JSON rendering of an eval report: the report value, written by its ``as_json()``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from introspection_cli.reporting.model import Transcripts, report_json
from introspection_cli.reporting.report import EvalReport, as_report

if TYPE_CHECKING:  # a type only: the JSON report never holds a comparison
    from introspection_cli.reporting.baseline import Comparison


def render_json(report: EvalReport | Mapping[str, Any], *, color: bool = False,
                comparison: Comparison | None = None,
                transcripts: Transcripts | None = None) -> str:
    """The report as indented JSON text (the same bytes ``--output FILE`` writes): exactly
    :meth:`EvalReport.as_json`, without the baseline comparison or the conversations."""
    return report_json(as_report(report).as_json())
