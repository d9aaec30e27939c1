"""The report model: the JSON report of ``introspection judges eval``, its schema and version.

The bottom layer of :mod:`introspection_cli.reporting`. :func:`build_report`
turns an :class:`EvalRun` into the report dict users script against; its shape
is published as ``schemas/eval-report.schema.json`` and is the input of every
renderer, so a baseline loaded from disk renders exactly like a fresh run.
Nothing here imports a comparison or a renderer.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from introspection_cli.evaluation.outcomes import (
    NO_TOKENS,
    EvalRun,
    JudgeRun,
    RowOutcome,
    Usage,
    total_tokens,
)
from introspection_cli.fsutil import atomic_write_text
from introspection_cli.provenance import GitState, tool_version, utc_now
from introspection_cli.reporting.metrics import REPORT_SPLITS, SCORED, SPLIT_ALIASES, stats_by_split

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
#: What a judge run's usage cost (None: no price for its model): the price table's
#: answer, given to the report as it is built.
CostOf = Callable[[JudgeRun], float | None]


@dataclass(frozen=True)
class Provenance:
    """Where the report comes from: tool version, creation time, the recipe's git commit."""

    tool_version: str = field(default_factory=tool_version)
    created_at: str = field(default_factory=utc_now)
    git: GitState | None = None


def held_out(stats: Mapping[str, Any]) -> bool:
    """Whether a report split is the held-out marker ``{"held_out": true, "n": N}``."""
    return bool(stats.get("held_out"))


def several_samples(report: Mapping[str, Any]) -> bool:
    """Whether the run made more than one call per row (``--samples`` > 1), so rows can be
    unstable. A report before version 3 does not say: a row with several samples tells."""
    if "samples" in report:
        return bool(report["samples"] > 1)
    return any(len(row["samples"]) > 1 for judge in report["judges"] for row in judge["rows"])


def split_of(splits: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    """The STATS of split ``name`` (``scored`` or its alias ``all`` included) in a report's
    ``splits``, of any version: reports before version 3 hold ``scored`` as ``all``."""
    name = SPLIT_ALIASES.get(name, name)
    if name == SCORED and SCORED not in splits:
        return splits["all"]  # type: ignore[no-any-return]
    return splits[name]  # type: ignore[no-any-return]


def build_report(run: EvalRun, provenance: Provenance | None = None) -> dict[str, Any]:
    """The JSON report of ``run`` alone: no gate, no price, no raters (what
    :func:`~introspection_cli.reporting.assemble.assemble_report` adds as it builds the
    report of a ``judges eval``)."""
    return report_document(run, provenance,
                                judges=[judge_json(first, others)
                                        for first, *others in by_judge(run.judges)])


def report_document(run: EvalRun, provenance: Provenance | None, *,
                         judges: Sequence[Mapping[str, Any]],
                         gates: Sequence[Mapping[str, Any]] = (),
                         cost: float | None = None) -> dict[str, Any]:
    """The JSON report of ``run``, from its judges' entries (:func:`judge_json`), its gates
    and the run's cost: plain JSON-ready dicts, lists, strings and numbers."""
    origin = provenance or Provenance()
    return {
        "report_version": REPORT_VERSION,
        "tool_version": origin.tool_version,
        "created_at": origin.created_at,
        "git": origin.git.as_json() if origin.git is not None else None,
        "recipe": run.recipe,
        "samples": run.samples,
        "judges": list(judges),
        "gates": list(gates),
        "usage": usage_json(run.usage, cost=cost),
    }


def by_judge(runs: Sequence[JudgeRun]) -> list[list[JudgeRun]]:
    """The runs of each judge, in order: one per model (``--model`` given more than once)."""
    grouped: dict[str, list[JudgeRun]] = {}
    for run in runs:
        grouped.setdefault(run.name, []).append(run)
    return list(grouped.values())


def judge_json(judge: JudgeRun, others: Sequence[JudgeRun] = (), *,
               cost_of: CostOf | None = None) -> dict[str, Any]:
    """A judge's entry: its run with the first model; with more models, ``usage`` and
    ``models`` (the other models' runs on the same rows), each ``usage`` priced by
    ``cost_of`` (null without it)."""
    def cost(run: JudgeRun) -> float | None:
        return None if cost_of is None else cost_of(run)

    entry: dict[str, Any] = {
        "name": judge.name,
        "provider": judge.provider,
        "model": judge.model,
        "fingerprint": judge.fingerprint,
        "rejected": [
            {"line": rejected.line, "code": rejected.code, "message": rejected.message}
            for rejected in judge.rejected
        ],
        **_run_json(judge),
    }
    if others:
        entry["usage"] = {**usage_json(judge.usage, cost=cost(judge)),
                          "needed": needed_json(judge.rows)}
        entry["models"] = [{"provider": other.provider, "model": other.model,
                            "fingerprint": other.fingerprint, **_run_json(other),
                            "usage": {**usage_json(other.usage, cost=cost(other)),
                                      "needed": needed_json(other.rows)}}
                           for other in others]
    return entry


def needed_json(rows: Sequence[RowOutcome]) -> dict[str, int]:
    """The tokens the rows' replies used, whether they came in this run or from the cache
    (what the rows cost, as against what this run spent): the sums over the rows whose
    tokens are known, and ``unknown_rows``, those whose cached replies were stored
    without them (by an introspection from before they were kept)."""
    known = [row.tokens for row in rows if row.tokens is not None]
    return {**(total_tokens(known) or NO_TOKENS).as_usage(),
            "unknown_rows": len(rows) - len(known)}


def _run_json(judge: JudgeRun) -> dict[str, Any]:
    stats = stats_by_split(judge.rows)
    splits: dict[str, Any] = {split: stats[split].as_json() for split in REPORT_SPLITS}
    if judge.held_out is not None:
        splits["test"] = {"held_out": True, "n": judge.held_out}
    # The name reports before version 3 gave it, for scripts that read it.
    splits["all"] = splits[SCORED]
    return {"splits": splits, "rows": [_row_json(row) for row in judge.rows]}


def usage_json(usage: Usage, *, cost: float | None = None) -> dict[str, Any]:
    """What the requests used, and what that cost (null: no price known)."""
    return {"requests": usage.requests, "batch_requests": usage.batch_requests,
            "cached": usage.cached,
            "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
            "cached_input_tokens": usage.cached_input_tokens,
            "cache_write_tokens": usage.cache_write_tokens,
            "rate_limited": usage.rate_limited, "concurrency": usage.concurrency,
            "cost": cost}


def row_from_json(row: Mapping[str, Any]) -> RowOutcome:
    """A report row (of any version) read back as the :class:`RowOutcome` it was made from."""
    return RowOutcome(row["line"], row["conversation_id"], row["split"], row["expected"],
                      row["outcome"], tuple(row["samples"]), row["unstable"], row["reasoning"],
                      row["error"], row["cached"], row.get("snapshot_hash"))


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
        **({"snapshot_hash": row.snapshot_hash} if row.snapshot_hash is not None else {}),
    }


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
