"""The report model: the JSON report of ``introspection judges eval``, its schema and version.

The bottom layer of :mod:`introspection_cli.reporting`: the report's version and
published schema (``schemas/eval-report.schema.json``), where a report comes from
(:class:`Provenance`) and how its JSON is written. The report value, which every
renderer reads (a baseline read from disk as a fresh run), is
:class:`~.report.EvalReport`, built by :mod:`.assemble`. Nothing here imports a
comparison or a renderer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from introspection_cli.evaluation.outcomes import (
    JudgeRun,
    Usage,
)
from introspection_cli.fsutil import atomic_write_text
from introspection_cli.provenance import GitState, tool_version, utc_now

REPORT_VERSION = 3
#: Versions ``--baseline`` reads, each with its published schema.
READABLE_VERSIONS: dict[int, str] = {1: "eval-report-v1", 2: "eval-report-v2", 3: "eval-report"}
REPORT_SCHEMA_NAME = READABLE_VERSIONS[REPORT_VERSION]  # schemas/eval-report.schema.json
#: The text shown for a held-out test split.
HELD_OUT_HINT = "--split test or judges certify"
#: The conversations the HTML page shows: judge -> calibration line -> events. Every
#: eval renderer takes the same options (``color``, ``comparison``, ``transcripts``:
#: the registry passes them all) and uses those its format can show.
Transcripts = Mapping[str, Mapping[int, Sequence[Any]]]
@dataclass(frozen=True)
class Provenance:
    """Where the report comes from: tool version, creation time, the recipe's git commit."""

    tool_version: str = field(default_factory=tool_version)
    created_at: str = field(default_factory=utc_now)
    git: GitState | None = None


def by_judge(runs: Sequence[JudgeRun]) -> list[list[JudgeRun]]:
    """The runs of each judge, in order: one per model (``--model`` given more than once)."""
    grouped: dict[str, list[JudgeRun]] = {}
    for run in runs:
        grouped.setdefault(run.name, []).append(run)
    return list(grouped.values())


def usage_json(usage: Usage, *, cost: float | None = None) -> dict[str, Any]:
    """What the requests used, and what that cost (null: no price known)."""
    return {"requests": usage.requests, "batch_requests": usage.batch_requests,
            "cached": usage.cached,
            "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
            "cached_input_tokens": usage.cached_input_tokens,
            "cache_write_tokens": usage.cache_write_tokens,
            "rate_limited": usage.rate_limited, "concurrency": usage.concurrency,
            "cost": cost}


def report_json(report: Mapping[str, Any]) -> str:
    """The report as indented JSON text with a trailing newline (non-ASCII kept readable).

    Written by orjson (a 4,000-row report in 2 ms; the standard library's indenting
    encoder is pure Python and took 40 ms): the same layout and the same values, a
    float in its shortest exact form either way (orjson writes ``3e-5`` where the
    standard library wrote ``3e-05``). A value orjson refuses (an integer beyond 64
    bits, a lone surrogate) goes through the standard library.
    """
    import orjson

    try:
        return orjson.dumps(report, option=orjson.OPT_INDENT_2).decode("utf-8") + "\n"
    except (orjson.JSONEncodeError, UnicodeDecodeError):
        return json.dumps(report, indent=2, ensure_ascii=False) + "\n"


def write_report(path: Path, report: Mapping[str, Any]) -> None:
    """Write the JSON report to ``path`` atomically (``--output FILE``).

    A symlink is written through (its target is replaced), never replaced by a file.
    """
    write_report_text(path, report_json(report))


def write_report_text(path: Path, text: str) -> None:
    """Write a rendered report (JSON, JUnit XML, HTML) to ``path`` atomically, through a
    symlink rather than over it."""
    atomic_write_text(path.resolve() if path.is_symlink() else path, text)


def load_report_schema(version: int = REPORT_VERSION) -> dict[str, Any]:
    """The published JSON Schema of report ``version`` (``schemas/eval-report.schema.json``
    for the current one). Shared and cached: do not mutate it."""
    from introspection_cli.resources import load_schema

    return load_schema(READABLE_VERSIONS[version])
