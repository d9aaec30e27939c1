"""``judges eval --dry-run``: what a run would send and cost, printed; nothing sent.

The body is the requests by judge and model and their totals; JSON lists every
request too (:mod:`introspection_cli.reporting.render_dry_run` writes the text).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from introspection_cli.errors import CommandResult
from introspection_cli.evaluation.dryrun import PlannedRequest, dry_run
from introspection_cli.evaluation.plan import load_valid_recipe
from introspection_cli.evaluation.runner import EvalOptions
from introspection_cli.formats import Format
from introspection_cli.pricing import PriceTable, finite_cost, load_prices
from introspection_cli.reporting.outputs import DryRunOutput
from introspection_cli.reporting.registry import ReportKind, check_format, render
from introspection_cli.workflows.judges_eval import evaluation_splits


def dry_run_recipe(path: Path, options: EvalOptions, *, fmt: str,
                   threshold_split: str = "scored") -> CommandResult:
    """The requests ``judges eval`` would make on the recipe at ``path``, and their cost."""
    chosen = check_format(ReportKind.DRY_RUN, fmt, context="--dry-run")
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
    if chosen is Format.JSON:  # the text leaves them out: only their totals
        body["requests"] = [_request_json(request) for request in planned.requests]
    stdout = render(ReportKind.DRY_RUN, chosen, DryRunOutput(body, batch=batch))
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
