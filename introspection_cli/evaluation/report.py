"""The JSON report of ``introspection judges eval`` (SPEC §3.2), and the gates on it.

:func:`build_report` turns an :class:`EvalRun` into the report dict users
script against; its shape is published as ``schemas/eval-report.schema.json``
and is the input of every renderer, so a baseline loaded from disk renders
exactly like a fresh run. Text and Markdown live in :mod:`.report_text` and
:mod:`.report_markdown`; baselines in :mod:`.baseline`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from introspection_cli.errors import UsageError
from introspection_cli.evaluation.metrics import stats_by_split
from introspection_cli.evaluation.outcomes import SPLITS, EvalRun, JudgeRun, RowOutcome
from introspection_cli.fsutil import atomic_write_text

if TYPE_CHECKING:
    from introspection_cli.evaluation.baseline import Comparison

REPORT_VERSION = 1
REPORT_SCHEMA_NAME = "eval-report"  # schemas/eval-report.schema.json
REPORT_FORMATS: tuple[str, ...] = ("text", "json", "markdown")


def build_report(run: EvalRun) -> dict[str, Any]:
    """The SPEC §3.2 report of ``run``: plain JSON-ready dicts, lists, strings and numbers."""
    return {
        "report_version": REPORT_VERSION,
        "recipe": run.recipe,
        "judges": [_judge_json(judge) for judge in run.judges],
        "usage": {
            "requests": run.usage.requests,
            "cached": run.usage.cached,
            "input_tokens": run.usage.input_tokens,
            "output_tokens": run.usage.output_tokens,
        },
    }


def _judge_json(judge: JudgeRun) -> dict[str, Any]:
    stats = stats_by_split(judge.rows)
    return {
        "name": judge.name,
        "provider": judge.provider,
        "model": judge.model,
        "rejected": [
            {"line": rejected.line, "code": rejected.code, "message": rejected.message}
            for rejected in judge.rejected
        ],
        "splits": {split: stats[split].as_json() for split in SPLITS},
        "rows": [_row_json(row) for row in judge.rows],
    }


def _row_json(row: RowOutcome) -> dict[str, Any]:
    return {
        "line": row.line,
        "conversation_id": row.conversation_id,
        "split": row.split,
        "expected": row.expected,
        "outcome": row.outcome,
        "samples": list(row.samples),
        "unstable": row.unstable,
        "reasoning": row.reasoning,
        "error": row.error,
        "cached": row.cached,
    }


def report_json(report: dict[str, Any]) -> str:
    """The report as indented JSON text with a trailing newline (non-ASCII kept readable)."""
    return json.dumps(report, indent=2, ensure_ascii=False) + "\n"


def write_report(path: Path, report: dict[str, Any]) -> None:
    """Write the JSON report to ``path`` atomically (``--output FILE``).

    A symlink is written through (its target is replaced), never replaced by a file.
    """
    atomic_write_text(path.resolve() if path.is_symlink() else path, report_json(report))


def render_report(report: dict[str, Any], fmt: str, *, color: bool = False,
                  comparison: Comparison | None = None) -> str:
    """The report in ``fmt`` (``text``, ``json`` or ``markdown``) for stdout.

    ``comparison`` (from :func:`~.baseline.compare_with_baseline`) is appended
    to text and Markdown; the JSON report stays exactly SPEC §3.2.
    """
    if fmt == "json":
        return report_json(report)
    if fmt == "text":
        from introspection_cli.evaluation.report_text import render_comparison_text, render_text

        text = render_text(report, color=color)
        if comparison is not None:
            text += "\n" + render_comparison_text(comparison, color=color)
        return text
    if fmt == "markdown":
        from introspection_cli.evaluation.report_markdown import render_markdown

        return render_markdown(report, comparison=comparison)
    raise UsageError(f"unknown report format {fmt!r}; use one of: {', '.join(REPORT_FORMATS)}")


def threshold_failures(report: dict[str, Any], *, min_agreement: float | None,
                       min_kappa: float | None, split: str = "all") -> list[str]:
    """One message per judge and threshold missed on ``split``; an empty list means all met.

    Thresholds compare the point estimate (not the interval's lower bound)
    and are inclusive: agreement 0.8 meets ``--min-agreement 0.8``. A null
    statistic (no non-error rows; kappa undefined) does not meet a threshold.
    """
    if split not in SPLITS:
        raise UsageError(f"unknown split {split!r} for thresholds; use one of: {', '.join(SPLITS)}")
    failures: list[str] = []
    for judge in report["judges"]:
        stats = judge["splits"][split]
        agreement = stats["agreement"]["value"] if stats["agreement"] is not None else None
        checks: Sequence[tuple[str, str, float | None, float | None]] = (
            ("agreement", "--min-agreement", min_agreement, agreement),
            ("kappa", "--min-kappa", min_kappa, stats["kappa"]),
        )
        for statistic, flag, minimum, value in checks:
            if minimum is None:
                continue
            where = f"judge {judge['name']}: {statistic} on split {split}"
            if value is None:
                failures.append(f"{where} is null ({_null_reason(statistic, stats)}), "
                                f"which does not meet {flag} {minimum:g}")
            elif value < minimum:
                failures.append(f"{where} is {value:.3f}, below {flag} {minimum:g}")
    return failures


def _null_reason(statistic: str, stats: dict[str, Any]) -> str:
    if stats["n"] == 0:
        return "no rows in this split"
    if stats["n"] == stats["errors"]:
        return "every row is an error"
    if statistic == "kappa":
        return "every label and outcome is the same class, so kappa is undefined"
    return "no rows to score"


def load_report_schema() -> dict[str, Any]:
    """The published JSON Schema of the report (``schemas/eval-report.schema.json``).

    Shared and cached: do not mutate it.
    """
    from introspection_cli.resources import load_schema

    return load_schema(REPORT_SCHEMA_NAME)
