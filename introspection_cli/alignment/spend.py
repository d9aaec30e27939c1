"""What an align run may spend, what it has spent, and what its next calls are estimated at.

Spent money is priced from the usage the providers report; the estimate of a
call not made yet is priced from tokens estimated from text length (about
four characters a token, as ``judges eval --dry-run`` estimates them): an
optimizer call is its prompt plus its whole output allowance, a candidate's
evaluation every train and dev request the verdict cache does not answer.
With ``--max-cost`` every price must be known (checked before any call);
a round starts only when what is spent plus its estimate stays within the limit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from introspection_cli.evaluation.dryrun import dry_run
from introspection_cli.evaluation.outcomes import Usage
from introspection_cli.evaluation.providers import ModelReply, ModelRequest
from introspection_cli.evaluation.runner import EvalOptions
from introspection_cli.evaluation.tokens import request_tokens
from introspection_cli.pricing import PriceTable
from introspection_cli.recipe.model import Recipe

Model = tuple[str, str]  # (provider, model)


@dataclass(frozen=True, slots=True)
class Estimate:
    """Requests, estimated tokens and their cost (None: a model without a price)."""

    requests: int
    input_tokens: int
    output_tokens: int
    cost: float | None

    def __add__(self, other: Estimate) -> Estimate:
        cost = None if self.cost is None or other.cost is None else self.cost + other.cost
        return Estimate(self.requests + other.requests, self.input_tokens + other.input_tokens,
                        self.output_tokens + other.output_tokens, cost)

    def times(self, count: int) -> Estimate:
        return Estimate(self.requests * count, self.input_tokens * count,
                        self.output_tokens * count,
                        None if self.cost is None else self.cost * count)


def _usage(tokens_in: int, tokens_out: int) -> dict[str, int]:
    return {"input_tokens": tokens_in, "output_tokens": tokens_out}


def optimizer_estimate(request: ModelRequest, model: Model, prices: PriceTable) -> Estimate:
    """One optimizer call: its prompt, and its whole output allowance."""
    tokens_in, _ = request_tokens(request)
    tokens_out = request.max_output_tokens or 0
    return Estimate(1, tokens_in, tokens_out,
                    prices.cost(*model, _usage(tokens_in, tokens_out)))


def evaluation_estimate(recipe: Recipe, options: EvalOptions, model: Model,
                        prices: PriceTable) -> Estimate:
    """The requests a run of ``options`` on ``recipe`` would make (the cache read as it is)."""
    planned = dry_run(recipe, options)
    tokens_in = sum(request.input_tokens for request in planned.requests)
    tokens_out = sum(request.output_tokens for request in planned.requests)
    return Estimate(len(planned.requests), tokens_in, tokens_out,
                    prices.cost(*model, _usage(tokens_in, tokens_out)))


@dataclass
class Budget:
    """Money and tokens spent so far against ``limit`` (None: no limit)."""

    prices: PriceTable
    limit: float | None
    #: None once something was spent on a model the price table does not have.
    spent: float | None = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    optimizer_calls: int = 0
    judge_requests: int = 0
    warnings: list[str] = field(default_factory=list)

    def allows(self, estimate: Estimate) -> bool:
        """Whether spending ``estimate`` more keeps the run within the limit."""
        if self.limit is None:
            return True
        if self.spent is None or estimate.cost is None:  # prices were checked: cannot be
            return False
        return self.spent + estimate.cost <= self.limit

    def add(self, model: Model, usage: dict[str, int]) -> float | None:
        """Count ``usage`` of ``model``; its cost (None without a price)."""
        self.input_tokens += usage.get("input_tokens", 0)
        self.output_tokens += usage.get("output_tokens", 0)
        cost = self.prices.cost(*model, usage)
        self.spent = None if cost is None or self.spent is None else self.spent + cost
        return cost

    def add_reply(self, model: Model, reply: ModelReply) -> float | None:
        """Count one optimizer call."""
        self.optimizer_calls += 1
        return self.add(model, {"input_tokens": reply.input_tokens,
                                "output_tokens": reply.output_tokens,
                                "cached_input_tokens": reply.cached_input_tokens,
                                "cache_write_tokens": reply.cache_write_tokens})

    def add_run(self, model: Model, usage: Usage) -> float | None:
        """Count one evaluation's requests."""
        self.judge_requests += usage.requests
        return self.add(model, {"input_tokens": usage.input_tokens,
                                "output_tokens": usage.output_tokens,
                                "cached_input_tokens": usage.cached_input_tokens,
                                "cache_write_tokens": usage.cache_write_tokens})


def missing_prices(prices: PriceTable, models: tuple[Model, ...]) -> list[str]:
    """``provider/model`` of each of ``models`` the price table has no price for."""
    return [f"{provider}/{model}" for provider, model in dict.fromkeys(models)
            if prices.price_of(provider, model) is None]
