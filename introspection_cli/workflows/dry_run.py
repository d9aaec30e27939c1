"""``judges eval --dry-run``: what a run would send and cost, printed; nothing sent.

Text is a table per judge and model (requests, estimated tokens, estimated cost
when the price table has the model), then totals; JSON lists every request.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from introspection_cli.errors import CommandResult, UsageError
from introspection_cli.evaluation.dryrun import PlannedRequest, dry_run
from introspection_cli.evaluation.plan import load_valid_recipe
from introspection_cli.evaluation.runner import EvalOptions
from introspection_cli.pricing import PriceTable, finite_cost, load_prices
from introspection_cli.workflows.judges_eval import evaluation_splits

_FORMATS = ("text", "json")


def dry_run_recipe(path: Path, options: EvalOptions, *, fmt: str,
                   threshold_split: str = "scored") -> CommandResult:
    """The requests ``judges eval`` would make on the recipe at ``path``, and their cost."""
    if fmt not in _FORMATS:
        raise UsageError(f"--dry-run prints text or json, not {fmt}")
    recipe, warnings = load_valid_recipe(path, options.judges)
    prices = load_prices()
    options = replace(options, splits=evaluation_splits(options.splits, threshold_split))
    planned = dry_run(recipe, options)
    groups = _by_model(planned.requests)
    batch = options.batch is not None
    summary = [_group_json(key, requests, prices, batch=batch) for key, requests in groups]
    totals = _totals(summary, planned.requests)
    body: dict[str, Any] = {"dry_run": True, "by_judge": summary, "totals": totals,
                            "cached": planned.cached, "gated": planned.gated,
                            "not_sendable": planned.not_sent}
    if fmt == "json":
        body["requests"] = [_request_json(request) for request in planned.requests]
        stdout = json.dumps(body, indent=2, ensure_ascii=False) + "\n"
    else:
        stdout = _text(body, batch=batch)
    problems = tuple(f"warning: {w}" for w in (*warnings, *planned.warnings))
    return CommandResult(stdout, problems)


GroupKey = tuple[str, str, str]


def _by_model(requests: Sequence[PlannedRequest]) -> list[tuple[GroupKey, list[PlannedRequest]]]:
    groups: dict[GroupKey, list[PlannedRequest]] = {}
    for request in requests:
        groups.setdefault((request.judge, request.provider, request.model), []).append(request)
    return list(groups.items())


def _group_json(key: GroupKey, requests: Sequence[PlannedRequest], prices: PriceTable, *,
                batch: bool) -> dict[str, Any]:
    judge, provider, model = key
    usage = {"input_tokens": sum(r.input_tokens for r in requests),
             "output_tokens": sum(r.output_tokens for r in requests)}
    return {"judge": judge, "provider": provider, "model": model, "requests": len(requests),
            **usage, "cost": prices.cost(provider, model, usage, batch=batch)}


def _totals(groups: Sequence[dict[str, Any]],
            requests: Sequence[PlannedRequest]) -> dict[str, Any]:
    costs = [group["cost"] for group in groups]
    return {"requests": len(requests),
            "input_tokens": sum(group["input_tokens"] for group in groups),
            "output_tokens": sum(group["output_tokens"] for group in groups),
            "cost": (finite_cost(sum(costs), "the cost of the requests")
                     if costs and None not in costs else None)}


def _request_json(request: PlannedRequest) -> dict[str, Any]:
    return {"judge": request.judge, "provider": request.provider, "model": request.model,
            "line": request.line, "conversation_id": request.conversation_id,
            "sample": request.sample, "input_tokens": request.input_tokens,
            "output_tokens": request.output_tokens}


def _money(cost: float | None) -> str:
    return "-" if cost is None else f"${cost:,.4f}"


def _text(body: dict[str, Any], *, batch: bool) -> str:
    header = ("judge", "provider", "model", "requests", "input tokens", "output tokens", "cost")
    rows = [[g["judge"], g["provider"], g["model"], f"{g['requests']:,}",
             f"~{g['input_tokens']:,}", f"~{g['output_tokens']:,}", _money(g["cost"])]
            for g in body["by_judge"]]
    totals = body["totals"]
    rows.append(["total", "", "", f"{totals['requests']:,}", f"~{totals['input_tokens']:,}",
                 f"~{totals['output_tokens']:,}", _money(totals["cost"])])
    widths = [max(len(str(cells[i])) for cells in (header, *rows)) for i in range(len(header))]
    lines = [f"dry run{' (--batch)' if batch else ''}: these requests would be made; none was"]
    for cells in (header, *rows):
        lines.append("  ".join(str(c).ljust(w) if i < 3 else str(c).rjust(w)
                               for i, (c, w) in enumerate(zip(cells, widths, strict=True)))
                     .rstrip())
    lines.append(f"{body['cached']} sample(s) answered by the cache, {body['gated']} row(s) "
                 f"gated (no call), {body['not_sendable']} not sendable (prompt too large or "
                 "gate timed out). Tokens are estimated from text length (about 4 characters "
                 "a token); costs need a price for the model in prices.toml.")
    return "\n".join(lines) + "\n"
