"""``judges eval --dry-run``: the requests a run would make, with estimated tokens; none made.

The run is planned as for real (verified rows, gates, the same prompts and cache
keys), and the cache is read, so what is listed is exactly what a real run would
send: every sample of every row not answered by the cache. Tokens are estimated
from text length (about four characters a token, as the providers' tokenizers
average on English), not counted by a tokenizer: the estimate of the input is
the system prompt, the user message and the tool's schema; of the output, the
judge's ``max_output_tokens`` or :data:`OUTPUT_ESTIMATE`, whichever is smaller.
No API key is needed and no SDK is imported.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from introspection_cli.evaluation.cache import VerdictCache, default_cache_dir
from introspection_cli.evaluation.cache_worker import CacheWorker
from introspection_cli.evaluation.plan import JudgePlan
from introspection_cli.evaluation.providers import resolve_endpoint
from introspection_cli.evaluation.runner import EvalOptions, make_plans
from introspection_cli.evaluation.slots import row_slots
from introspection_cli.evaluation.tokens import CHARS_PER_TOKEN as CHARS_PER_TOKEN
from introspection_cli.evaluation.tokens import OUTPUT_ESTIMATE as OUTPUT_ESTIMATE
from introspection_cli.evaluation.tokens import estimate_tokens as estimate_tokens
from introspection_cli.evaluation.tokens import request_tokens
from introspection_cli.recipe.model import Recipe


@dataclass(frozen=True, slots=True)
class PlannedRequest:
    """One request a run would make."""

    judge: str
    provider: str
    model: str
    line: int
    conversation_id: str
    sample: int
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True)
class DryRun:
    """Every request a run would make, and how many samples the cache would answer."""

    requests: tuple[PlannedRequest, ...]
    cached: int
    gated: int
    not_sent: int  # rows whose prompt is too large, or whose gate timed out
    warnings: tuple[str, ...] = field(default_factory=tuple)


def dry_run(recipe: Recipe, options: EvalOptions,
            environ: Mapping[str, str] | None = None) -> DryRun:
    """The requests ``judges eval`` with ``options`` would make on ``recipe``."""
    env = os.environ if environ is None else environ
    plans = make_plans(recipe, options)
    cache = VerdictCache(options.cache_dir or default_cache_dir()) if options.use_cache else None
    requests, counts = asyncio.run(_collect(plans, options, cache, env))
    warnings = tuple(cache.warnings) if cache is not None else ()
    gated = sum(1 for plan in plans for row in plan.rows if row.gated)
    errors = sum(1 for plan in plans for row in plan.rows if row.gate_error is not None)
    return DryRun(tuple(requests), counts[0], gated, counts[1] + errors, warnings)


async def _collect(plans: Sequence[JudgePlan], options: EvalOptions,
                   cache: VerdictCache | None, env: Mapping[str, str]
                   ) -> tuple[list[PlannedRequest], tuple[int, int]]:
    worker = CacheWorker(cache) if cache is not None else None
    requests: list[PlannedRequest] = []
    cached = too_large = 0
    try:
        for name in dict.fromkeys(plan.provider for plan in plans):
            rows = row_slots([plan for plan in plans if plan.provider == name], provider=name,
                             endpoint=resolve_endpoint(name, env), samples=options.samples,
                             cache=worker)
            async for samples in rows:
                for slot in samples:
                    if slot.result is not None:
                        cached += slot.result.cached
                        too_large += not slot.result.cached
                        continue
                    assert slot.request is not None
                    tokens_in, tokens_out = request_tokens(slot.request)
                    requests.append(PlannedRequest(
                        slot.plan.judge.name, slot.plan.provider, slot.plan.model,
                        slot.row.line, slot.row.conversation_id, slot.sample, tokens_in,
                        tokens_out))
    finally:
        if worker is not None:
            await worker.aclose()
    return requests, (cached, too_large)
