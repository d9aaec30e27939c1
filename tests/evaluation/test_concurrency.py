"""Calls in flight: up to --concurrency, halved on a 429, grown back on success; prompt caching.

The limiter is tested on its own (asyncio, no network), then through the real
SDKs against a stub that rate-limits whenever too many requests are in flight.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from introspection_cli.evaluation.limits import AdaptiveLimiter
from introspection_cli.evaluation.runner import EvalOptions, EvalResult, run_eval
from introspection_cli.recipe.model import Recipe
from tests.evaluation.conftest import (
    GATED_JUDGE,
    SENTINEL_KEY,
    fixture_row,
    recipe_object,
    write_recipe,
)
from tests.evaluation.stub_model_server import StubModelServer


def test_a_429_halves_the_limit_once_for_the_calls_already_in_flight() -> None:
    async def scenario() -> list[int]:
        limiter = AdaptiveLimiter(16)
        seen = []

        async def call(rate_limited: bool) -> None:
            if rate_limited:
                limiter.saw_rate_limit(None)
            await asyncio.sleep(0)
            limiter.release()

        tasks = []
        for _ in range(16):
            await limiter.acquire()
            tasks.append(asyncio.create_task(call(rate_limited=True)))  # all 16 see a 429
        await asyncio.gather(*tasks)
        seen.append(limiter.limit)  # 8: one halving for the 16 that started together
        await limiter.acquire()
        await asyncio.create_task(call(rate_limited=True))  # started under 8: halves again
        seen.append(limiter.limit)
        for _ in range(10):
            await limiter.acquire()
            await asyncio.create_task(call(rate_limited=True))
        seen.append(limiter.limit)  # never below 1
        return [*seen, limiter.lowest, limiter.rate_limited]

    assert asyncio.run(scenario()) == [8, 4, 1, 1, 27]


def test_the_limit_grows_back_by_one_per_window_of_successes() -> None:
    limiter = AdaptiveLimiter(8)
    limiter.limit = 2
    for _ in range(2):
        limiter.succeeded()
    assert limiter.limit == 3
    for _ in range(3 + 4 + 5 + 6 + 7 + 8):
        limiter.succeeded()
    assert limiter.limit == 8  # the ceiling


def test_acquire_waits_for_room_and_for_retry_after() -> None:
    async def scenario() -> tuple[bool, float]:
        limiter = AdaptiveLimiter(1)
        await limiter.acquire()
        second = asyncio.create_task(limiter.acquire())
        await asyncio.sleep(0.05)
        blocked = not second.done()  # the one slot is taken
        loop = asyncio.get_running_loop()
        limiter.saw_rate_limit(0.3)
        paused_at = loop.time()
        limiter.release()
        await second
        return blocked, loop.time() - paused_at

    blocked, waited = asyncio.run(scenario())
    assert blocked
    assert waited >= 0.29  # no new call before the Retry-After has passed


def recipe_of(tmp_path: Path, count: int, provider: str = "openai") -> Recipe:
    rows = [fixture_row(f"conv_{i}", f"refund {i} VERDICT:pass") for i in range(count)]
    root = write_recipe(tmp_path / "recipe", {"billing": (GATED_JUDGE, rows)}, provider=provider)
    return recipe_object(root, provider=provider)


def run(recipe: Recipe, server: StubModelServer, **options: object) -> EvalResult:
    env = {"OPENAI_BASE_URL": server.openai_url, "ANTHROPIC_BASE_URL": server.anthropic_url,
           "OPENAI_API_KEY": SENTINEL_KEY, "ANTHROPIC_API_KEY": SENTINEL_KEY}
    settings = {"max_retries": 8, "timeout": 10.0, "use_cache": False, **options}
    return run_eval(recipe, EvalOptions(**settings), environ=env)  # type: ignore[arg-type]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_rate_limited_run_backs_off_and_reports_it(tmp_path: Path, provider: str) -> None:
    with StubModelServer(latency=0.05, rate_limit_above=4, retry_after=0.05) as server:
        result = run(recipe_of(tmp_path, 60, provider), server, concurrency=16)
        limited = server.rate_limited
    assert [row.outcome for row in result.run.judges[0].rows] == ["pass"] * 60
    usage = result.run.usage
    assert usage.rate_limited == limited > 0  # every 429 the stub sent was seen
    assert usage.concurrency is not None and usage.concurrency < 16


def test_a_run_without_rate_limits_reaches_its_concurrency(tmp_path: Path) -> None:
    # A latency long enough for a loaded machine to send all 64 within it (the stub
    # shares this process): how many fit in a short latency is a speed, for bench/.
    with StubModelServer(latency=1.5) as server:
        result = run(recipe_of(tmp_path, 64), server, concurrency=64)
        assert server.max_in_flight == 64
    assert (result.run.usage.rate_limited, result.run.usage.concurrency) == (0, 64)


def test_prompt_cache_tokens_are_counted_for_openai(tmp_path: Path) -> None:
    with StubModelServer(cached_tokens=80) as server:
        usage = run(recipe_of(tmp_path, 3), server).run.usage
    assert (usage.input_tokens, usage.cached_input_tokens, usage.cache_write_tokens) == (
        300, 240, 0)


def test_anthropic_caches_the_instructions_and_counts_cache_tokens(tmp_path: Path) -> None:
    with StubModelServer(cached_tokens=80) as server:
        usage = run(recipe_of(tmp_path, 3, "anthropic"), server).run.usage
        bodies = [request.body for request in server.requests]
    # Anthropic counts cache reads and writes apart from input_tokens: all are input.
    assert (usage.input_tokens, usage.cached_input_tokens, usage.cache_write_tokens) == (
        3 * (100 + 80 + 7), 240, 21)
    for body in bodies:
        (message,) = body["messages"]
        prefix, rest = message["content"]
        assert prefix["cache_control"] == {"type": "ephemeral"}
        assert prefix["text"].startswith("# Evaluation instructions")
        assert prefix["text"].endswith("[BEGIN EVALUATED MATERIAL: conversation]\n")
        assert "cache_control" not in rest and rest["text"].startswith("[1] message from user")
    # The prefix is the same for every row: what a provider can cache.
    assert len({body["messages"][0]["content"][0]["text"] for body in bodies}) == 1
