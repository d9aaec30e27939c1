"""Every renderer, by (report kind, format): the one place a command finds how to print.

The top of the reporting layers. Renderers are imported only when asked for (a
module path, not the function, is registered), so ``check`` loads only its own
renderer and a JSON run never loads the text or Markdown code.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import StrEnum
from importlib import import_module
from typing import Any

from introspection_cli.formats import Format, parse_format


class ReportKind(StrEnum):
    """What is rendered: each command's result has its own kind."""

    EVAL = "eval"
    CHECK = "check"
    DOCTOR = "doctor"
    CERTIFY = "certify"
    VERIFY = "verify"
    ESTIMATE = "estimate"
    ESTIMATE_RANDOM = "estimate-random"
    DRY_RUN = "dry-run"
    AGREE = "agree"
    PROMPT = "prompt"
    PLAN = "plan"
    STATUS = "status"
    ALIGN = "align"
    ALIGN_DRY_RUN = "align-dry-run"


def _text_and_document(text: str) -> dict[Format, str]:
    """A kind printed as ``text`` for people and as its JSON document for scripts."""
    return {Format.TEXT: text, Format.JSON: "render_document:render_document"}


#: (kind, format) -> "module:function" under :mod:`introspection_cli.reporting`.
_RENDERERS: dict[ReportKind, dict[Format, str]] = {
    ReportKind.EVAL: {Format.TEXT: "render_text:render_text",
                      Format.JSON: "render_json:render_json",
                      Format.MARKDOWN: "render_markdown:render_markdown",
                      Format.JUNIT: "render_junit:render_junit",
                      Format.HTML: "render_html:render_html"},
    ReportKind.CHECK: {Format.TEXT: "render_check:check_text",
                       Format.JSON: "render_check:check_json",
                       Format.GITHUB: "render_check:check_github",
                       Format.SARIF: "render_check_sarif:check_sarif"},
    ReportKind.DOCTOR: _text_and_document("render_doctor:render_doctor_text"),
    ReportKind.CERTIFY: _text_and_document("render_certify:certify_text"),
    ReportKind.VERIFY: _text_and_document("render_certify:verify_text"),
    ReportKind.ESTIMATE: _text_and_document("render_estimate:correction_text"),
    ReportKind.ESTIMATE_RANDOM: _text_and_document("render_estimate:random_design_text"),
    ReportKind.DRY_RUN: _text_and_document("render_dry_run:dry_run_text"),
    ReportKind.AGREE: _text_and_document("render_agree:agreement_text"),
    ReportKind.PROMPT: _text_and_document("render_prompt:prompt_text"),
    ReportKind.PLAN: _text_and_document("render_plan:plan_text"),
    ReportKind.STATUS: _text_and_document("render_status:status_text"),
    ReportKind.ALIGN: _text_and_document("render_align:align_text"),
    ReportKind.ALIGN_DRY_RUN: _text_and_document("render_align:align_dry_run_text"),
}
#: Formats written only to a file (``--junit FILE``, ``--html FILE``), never to stdout.
FILE_FORMATS = (Format.JUNIT, Format.HTML)


def stdout_formats(kind: ReportKind) -> tuple[Format, ...]:
    """The formats ``--format`` takes for ``kind``: what its renderers print on stdout."""
    return tuple(fmt for fmt in _RENDERERS[kind] if fmt not in FILE_FORMATS)


def check_format(kind: ReportKind, value: str, *, context: str | None = None) -> Format:
    """``--format VALUE`` for a command printing ``kind``; exit 2 naming the formats it
    takes otherwise."""
    return parse_format(value, stdout_formats(kind), context=context)


def renderer(kind: ReportKind, fmt: Format) -> Callable[..., str]:
    """The function rendering ``kind`` in ``fmt``, imported now."""
    module, _, name = _RENDERERS[kind][fmt].partition(":")
    function: Callable[..., str] = getattr(
        import_module(f"introspection_cli.reporting.{module}"), name)
    return function


def render(kind: ReportKind, fmt: Format, value: Any, **options: Any) -> str:
    """``value`` (the result of a ``kind`` command) rendered in ``fmt``; ``options`` are the
    renderer's keyword arguments (``color``, ``comparison``, ...)."""
    return renderer(kind, fmt)(value, **options)


def registered() -> Iterable[tuple[ReportKind, Format]]:
    """Every (kind, format) with a renderer (for the tests that import each one)."""
    return [(kind, fmt) for kind, formats in _RENDERERS.items() for fmt in formats]
