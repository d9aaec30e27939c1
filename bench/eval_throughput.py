"""Throughput of ``introspection judges eval`` against a stub model with 100 ms latency.

Generates a recipe with 400 calibration rows, runs ``judges eval --concurrency 16``
in a subprocess with OPENAI_BASE_URL pointing at the stub (tests/evaluation/
stub_model_server.py: every request is answered 100 ms after it arrives,
concurrent requests overlap) and a fresh INTROSPECTION_CACHE_DIR. Figures, per
BenchResult:

1. wall time of the cold run against the ideal 400 x 0.1 s / 16 = 2.5 s
   (the issue's target: <= 1.25). The wall includes process start, recipe check,
   fixture verification, the SDK import and the report.
2. wall time of the cold run against the bare SDK (target <= 1.05): a script
   that sends the same 400 request bodies through ``openai.AsyncOpenAI`` with the
   same concurrency and does nothing else. It pays what no client of the official
   SDK can avoid (importing it, about 0.3 s; about 1 ms of CPU per request), so
   this ratio is what ``judges eval`` itself adds: checking the recipe,
   verifying and gating rows, rendering prompts, the cache and the report.
3. wall time of a second run on the warm cache (target <= 1 s), and
4. the requests it made (target 0).

Each round runs the cold eval, the cached eval and the bare-SDK script back to
back, so both sides of a ratio see the same machine. ``ours`` is the best of
``runs`` rounds, as ``timeit`` advises (slower runs are other processes getting in
the way); ``main()`` also prints the median and every run.

Run: python bench/eval_throughput.py [--runs N]
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

# The bare SDK: the same requests through one AsyncOpenAI client and a semaphore, nothing else.
_BARE_SDK_SCRIPT = """
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


class Round(NamedTuple):
    """One round: a cold run on a fresh cache, the cached re-run, the bare-SDK script."""

    cold: EvalRun
    cached: EvalRun
    bare_sdk: float


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


def write_request_bodies(recipe: Path, path: Path) -> Path:
    """The exact ``chat.completions.create`` arguments eval sends, for the bare-SDK script."""
    from introspection_cli.evaluation.plan import load_valid_recipe, plan_judge
    from introspection_cli.evaluation.providers.openai_provider import request_body

    plan = plan_judge(load_valid_recipe(recipe)[0].judges["helpful"], splits=(), provider=None,
                      model=None, regex_timeout=1.0)
    bodies = [request_body(plan.request_for(row)) for row in plan.rows if row.calls_model]
    path.write_text(json.dumps(bodies), encoding="utf-8")
    return path


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


def timed_bare_sdk(bodies: Path, env: dict[str, str], stub: StubModelServer) -> float:
    """Run the bare-SDK script once; exit if it fails or did not send every request."""
    served_before = len(stub.requests)
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", _BARE_SDK_SCRIPT, str(bodies),
                             str(CONCURRENCY)], env=env, capture_output=True, text=True,
                            check=False)
    wall = time.perf_counter() - start
    if result.returncode != 0 or len(stub.requests) - served_before != ROWS:
        raise SystemExit(f"the bare-SDK script exited {result.returncode}: "
                         f"{result.stderr[-2000:]}")
    return wall


def run_rounds(runs: int) -> list[Round]:
    """``runs`` timed rounds, after one that only warms the page cache."""
    rounds = []
    with tempfile.TemporaryDirectory() as tmp, StubModelServer(latency=LATENCY) as stub:
        recipe = make_recipe(Path(tmp) / "recipe")
        bodies = write_request_bodies(recipe, Path(tmp) / "bodies.json")
        for attempt in range(runs + 1):
            env = bench_env(OPENAI_BASE_URL=stub.openai_url, OPENAI_API_KEY="sk-bench",
                            INTROSPECTION_CACHE_DIR=str(Path(tmp) / f"cache-{attempt}"))
            cold = timed_eval(recipe, env, stub)
            cached = timed_eval(recipe, env, stub)
            bare_sdk = timed_bare_sdk(bodies, env, stub)
            if attempt:
                rounds.append(Round(cold, cached, bare_sdk))
    return rounds


def results(rounds: list[Round]) -> list[BenchResult]:
    """The four figures from timed rounds."""
    cold = min(r.cold.wall for r in rounds)
    cached = min(r.cached.wall for r in rounds)
    # A count, not a time: the worst run is the one that matters.
    cached_requests = max(max(r.cached.requests, r.cached.served) for r in rounds)
    return [
        BenchResult(f"eval: {ROWS} rows, {LATENCY * 1000:.0f} ms latency, concurrency "
                    f"{CONCURRENCY}", cold, "s", "ideal", IDEAL, 1.25),
        BenchResult("eval: same cold run vs the bare SDK", cold, "s", "bare AsyncOpenAI",
                    min(r.bare_sdk for r in rounds), 1.05),
        BenchResult("eval: cached re-run wall", cached, "s", None, None, 1.0),
        BenchResult("eval: cached re-run requests", cached_requests, "requests", None, None, 0),
    ]


def measure(runs: int = 3) -> list[BenchResult]:
    """The four figures, each the best of ``runs`` rounds."""
    return results(run_rounds(runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    rounds = run_rounds(max(1, args.runs))
    print(table(results(rounds)))

    def spread(name: str, walls: list[float]) -> str:
        median = statistics.median(walls)
        return (f"{name}: median {median:.2f} s (vs ideal {median / IDEAL:.2f}); each "
                + ", ".join(f"{wall:.2f}" for wall in walls))

    print()
    print(spread("cold runs", [r.cold.wall for r in rounds]))
    print(spread("bare SDK", [r.bare_sdk for r in rounds]))
    print("cached runs: " + ", ".join(f"{r.cached.wall:.2f}" for r in rounds))


if __name__ == "__main__":
    main()
