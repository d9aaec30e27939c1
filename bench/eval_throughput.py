"""Throughput of ``introspection judges eval`` against a stub model with 100 ms latency.

Generates a recipe with 400 calibration rows, runs ``judges eval --concurrency 16``
in a subprocess with OPENAI_BASE_URL pointing at the stub (tests/evaluation/
stub_model_server.py: every request waits 100 ms, concurrent requests overlap)
and a fresh INTROSPECTION_CACHE_DIR. Figures, per BenchResult:

1. wall time of the cold run against the ideal 400 x 0.1 s / 16 = 2.5 s
   (target <= 1.25). The wall includes process start, recipe check, fixture
   verification, the SDK import and the report.
2. wall time of a second run on the warm cache (target <= 1 s), and
3. the requests it made (target 0).

``ours`` is the best of ``runs`` runs, as ``timeit`` advises (slower runs are
other processes getting in the way); ``main()`` also prints the median and every
run, and a floor measured in the same run: a bare script sending the same 400
requests through ``openai.AsyncOpenAI`` with the same concurrency, nothing else.

Run: python bench/eval_throughput.py [--runs N] [--no-floor]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from _timing import BenchResult, bench_env, table  # noqa: E402

from tests.evaluation.stub_model_server import StubModelServer  # noqa: E402
from tests.fixture.rowmaker import fixture_envelope  # noqa: E402

ROWS = 400
LATENCY = 0.1
CONCURRENCY = 16
IDEAL = ROWS * LATENCY / CONCURRENCY

JUDGE = """\
name: helpful
description: Was the agent helpful
llm:
  provider: openai
  model: stub-model
instructions: |
  Return pass when the agent helped, fail when it did not, not_applicable otherwise.
"""

# The floor: the same requests through the bare SDK, one client, a semaphore, nothing else.
_FLOOR_SCRIPT = """
import asyncio, json, sys
import openai

async def main(bodies, concurrency):
    client = openai.AsyncOpenAI(max_retries=2, timeout=60.0)
    semaphore = asyncio.Semaphore(concurrency)

    async def one(body):
        async with semaphore:
            await client.chat.completions.create(**body)

    await asyncio.gather(*(one(body) for body in bodies))
    await client.close()

with open(sys.argv[1], encoding="utf-8") as handle:
    asyncio.run(main(json.load(handle), int(sys.argv[2])))
"""


class EvalRun(NamedTuple):
    """One timed ``judges eval`` run (a NamedTuple: bench/run.py loads this file without
    registering it in sys.modules, which a dataclass needs)."""

    wall: float
    requests: int  # as the report's usage counts them
    served: int  # as the stub counted them


def make_recipe(root: Path) -> Path:
    """A recipe with one ungated judge and ROWS labelled, valid calibration rows."""
    (root / "judges").mkdir(parents=True)
    (root / "SYSTEM.md").write_text("You are a support agent.\n", encoding="utf-8")
    (root / "judges" / "helpful.yaml").write_text(JUDGE, encoding="utf-8")
    lines = []
    for i in range(ROWS):
        judge_input = {"conversation_id": f"conv_{i:04d}", "events": [
            {"type": "message", "role": "user", "text": f"Question {i}: where is my order?"},
            {"type": "message", "role": "assistant", "text": f"Order {i} ships tomorrow."}]}
        lines.append(json.dumps(fixture_envelope(
            judge_input, expected="pass", split=("train", "dev", "test", None)[i % 4],
            runtime_url="https://runtime.example")))
    (root / "judges" / "helpful.calibration.jsonl").write_text("\n".join(lines) + "\n",
                                                               encoding="utf-8")
    return root


def timed_eval(recipe: Path, env: dict[str, str], stub: StubModelServer) -> EvalRun:
    """Run ``judges eval`` once in a subprocess; exit with its output if it fails."""
    served_before = len(stub.requests)
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "introspection_cli", "judges", "eval", str(recipe),
         "--concurrency", str(CONCURRENCY), "--format", "json"],
        env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if result.returncode != 0 or not result.stdout.strip():
        raise SystemExit(f"judges eval exited {result.returncode}: {result.stderr[-2000:]}")
    usage = json.loads(result.stdout)["usage"]
    return EvalRun(wall, int(usage["requests"]), len(stub.requests) - served_before)


def run_pairs(runs: int) -> list[tuple[EvalRun, EvalRun]]:
    """``runs`` (cold, cached) pairs, each cold run on a fresh cache, after one warm-up."""
    pairs = []
    with tempfile.TemporaryDirectory() as tmp, StubModelServer(latency=LATENCY) as stub:
        recipe = make_recipe(Path(tmp) / "recipe")
        for attempt in range(runs + 1):
            env = bench_env(OPENAI_BASE_URL=stub.openai_url, OPENAI_API_KEY="sk-bench",
                            INTROSPECTION_CACHE_DIR=str(Path(tmp) / f"cache-{attempt}"))
            cold = timed_eval(recipe, env, stub)
            cached = timed_eval(recipe, env, stub)
            if attempt:  # the first pair only warms the page cache
                pairs.append((cold, cached))
    return pairs


def results(pairs: list[tuple[EvalRun, EvalRun]]) -> list[BenchResult]:
    """The three figures from timed (cold, cached) pairs."""
    cold = min(pair[0].wall for pair in pairs)
    cached = min(pair[1].wall for pair in pairs)
    # A count, not a time: the worst run is the one that matters.
    cached_requests = max(max(pair[1].requests, pair[1].served) for pair in pairs)
    return [
        BenchResult(f"eval: {ROWS} rows, {LATENCY * 1000:.0f} ms latency, concurrency "
                    f"{CONCURRENCY}", cold, "s", "ideal", IDEAL, 1.25),
        BenchResult("eval: cached re-run wall", cached, "s", None, None, 1.0),
        BenchResult("eval: cached re-run requests", cached_requests, "requests", None, None, 0),
    ]


def measure(runs: int = 3) -> list[BenchResult]:
    """Cold-run wall against the ideal, cached-run wall and requests (best of ``runs``)."""
    return results(run_pairs(runs))


def measure_floor(runs: int = 3) -> list[float]:
    """Wall seconds of the bare-SDK script sending the same requests, ``runs`` times."""
    from introspection_cli.evaluation.plan import plan_judge
    from introspection_cli.evaluation.providers.openai_provider import _create_kwargs
    from introspection_cli.evaluation.session import load_valid_recipe

    walls = []
    with tempfile.TemporaryDirectory() as tmp, StubModelServer(latency=LATENCY) as stub:
        recipe = load_valid_recipe(make_recipe(Path(tmp) / "recipe"))
        plan = plan_judge(recipe.judges["helpful"], splits=(), provider=None, model=None,
                          regex_timeout=1.0)
        bodies = Path(tmp) / "bodies.json"
        bodies.write_text(json.dumps([_create_kwargs(plan.request_for(row)) for row in plan.rows
                                      if row.calls_model]), encoding="utf-8")
        env = bench_env(OPENAI_BASE_URL=stub.openai_url, OPENAI_API_KEY="sk-bench")
        for attempt in range(runs + 1):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", _FLOOR_SCRIPT, str(bodies), str(CONCURRENCY)],
                           env=env, check=True, capture_output=True)
            if attempt:
                walls.append(time.perf_counter() - start)
    return walls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-floor", action="store_true",
                        help="skip the bare-SDK floor measurement")
    args = parser.parse_args()
    pairs = run_pairs(max(1, args.runs))
    print(table(results(pairs)))
    colds = [pair[0].wall for pair in pairs]
    print(f"\ncold runs: median {statistics.median(colds):.2f} s (ratio "
          f"{statistics.median(colds) / IDEAL:.2f}); each: "
          + ", ".join(f"{wall:.2f}" for wall in colds)
          + "; cached runs: " + ", ".join(f"{pair[1].wall:.2f}" for pair in pairs))
    if not args.no_floor:
        floor = measure_floor(max(1, args.runs))
        print(f"floor (bare AsyncOpenAI, same {ROWS} requests, concurrency {CONCURRENCY}): "
              f"best {min(floor):.2f} s (ratio {min(floor) / IDEAL:.2f}), median "
              f"{statistics.median(floor):.2f} s (ratio {statistics.median(floor) / IDEAL:.2f})")


if __name__ == "__main__":
    main()
