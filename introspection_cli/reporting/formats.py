"""Picking a renderer by name: the top of the reporting layers.

Renderers are imported only when asked for, so a JSON run never loads the
text or Markdown code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from introspection_cli.errors import UsageError

if TYPE_CHECKING:  # the baseline code is loaded only by a run that compares with one
    from introspection_cli.reporting.baseline import Comparison

REPORT_FORMATS: tuple[str, ...] = ("text", "json", "markdown")
#: Formats written only to a file (``--junit FILE``, ``--html FILE``), never to stdout.
FILE_FORMATS: tuple[str, ...] = ("junit", "html")


def check_report_format(fmt: str) -> str:
    """Validate ``--format`` for eval."""
    if fmt not in REPORT_FORMATS:
        raise UsageError(f"unknown format {fmt!r}; use one of: {', '.join(REPORT_FORMATS)}")
    return fmt


def render_report(report: dict[str, Any], fmt: str, *, color: bool = False,
                  comparison: Comparison | None = None,
                  transcripts: Mapping[str, Mapping[int, Sequence[Any]]] | None = None) -> str:
    """The report in ``fmt``: ``text``, ``json`` or ``markdown`` for stdout, or one of
    :data:`FILE_FORMATS`.

    ``comparison`` (from :func:`~.baseline.compare_with_baseline`) is appended
    to text, Markdown and HTML; the JSON report stays exactly the report model.
    ``transcripts`` (judge -> calibration line -> events) are the conversations the
    HTML page shows.
    """
    if fmt == "json":
        from introspection_cli.reporting.render_json import render_json

        return render_json(report)
    if fmt == "text":
        from introspection_cli.reporting.render_text import render_comparison_text, render_text

        text = render_text(report, color=color)
        if comparison is not None:
            text += "\n" + render_comparison_text(comparison, color=color)
        return text
    if fmt == "markdown":
        from introspection_cli.reporting.render_markdown import render_markdown

        return render_markdown(report, comparison=comparison)
    if fmt == "junit":
        from introspection_cli.reporting.render_junit import render_junit

        return render_junit(report)
    if fmt == "html":
        from introspection_cli.reporting.render_html import render_html

        return render_html(report, comparison=comparison, transcripts=transcripts)
    raise UsageError(f"unknown report format {fmt!r}; use one of: {', '.join(REPORT_FORMATS)}")
