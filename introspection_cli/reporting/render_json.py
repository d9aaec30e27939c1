"""The JSON rendering of an eval report: the report model, serialised as it is."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from introspection_cli.reporting.model import Transcripts, report_json

if TYPE_CHECKING:  # a type only: the JSON report never holds a comparison
    from introspection_cli.reporting.baseline import Comparison


def render_json(report: Mapping[str, Any], *, color: bool = False,
                comparison: Comparison | None = None,
                transcripts: Transcripts | None = None) -> str:
    """The report as indented JSON text (the same bytes ``--output FILE`` writes): exactly
    the report model, without the baseline comparison or the conversations."""
    return report_json(report)
