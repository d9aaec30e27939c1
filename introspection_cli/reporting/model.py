"""The report model: the JSON report of ``introspection judges eval``, its schema and version.

The bottom layer of :mod:`introspection_cli.reporting`. :func:`build_report`
turns an :class:`EvalRun` into the report dict users script against; its shape
is published as ``schemas/eval-report.schema.json`` and is the input of every
renderer, so a baseline loaded from disk renders exactly like a fresh run.
Nothing here imports a comparison or a renderer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from introspection_cli.evaluation.outcomes import SPLITS, EvalRun, JudgeRun, RowOutcome
from introspection_cli.fsutil import atomic_write_text
from introspection_cli.reporting.metrics import stats_by_split

REPORT_VERSION = 1
REPORT_SCHEMA_NAME = "eval-report"  # schemas/eval-report.schema.json


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


def load_report_schema() -> dict[str, Any]:
    """The published JSON Schema of the report (``schemas/eval-report.schema.json``).

    Shared and cached: do not mutate it.
    """
    from introspection_cli.resources import load_schema

    return load_schema(REPORT_SCHEMA_NAME)
