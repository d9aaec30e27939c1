"""Throughput of ``introspection judges eval`` against a stub model with 100 ms latency.

Builds a recipe whose calibration rows are realistic conversations (several
messages and a tool call, with non-ASCII text in every row: €, –, é, ü), and runs
``judges eval`` in a subprocess with OPENAI_BASE_URL pointing at the stub
(tests/evaluation/stub_model_server.py: every request is answered 100 ms after it
arrives, concurrent requests overlap, and the stub counts the most requests it
was answering at one moment). Figures, per BenchResult:

1. a cold run of 4,000 rows at ``--concurrency 64`` against the bare SDK (target
   <= 0.85): a script that sends the same 4,000 request bodies through
   ``openai.AsyncOpenAI`` (its default transport) with the same concurrency and
   does nothing else;
2. how far the most requests in flight during that run, as the stub saw them,
   fell short of the concurrency (target 0: the run reaches 64);
3. the same with 400 rows at ``--concurrency 16`` (target <= 1.0 of the bare SDK);
4. a re-run of the 4,000 rows on the warm cache against ``introspection check``
   of the same recipe (target <= 1.5): both read and verify every calibration
   row; the cached run also finds every row's verdict (by its prompt memo, so it
   renders nothing) and writes the ledger and the report;
5. the requests that cached re-run made (target 0).

Each round runs every measured command once, the two sides of each ratio back to
back, so both see the same machine; ``ours`` and the baselines are each the best
of ``runs`` rounds, as ``timeit`` advises (slower runs are other processes getting
in the way); ``main()`` also prints every run and the load average.

Run: python bench/eval_throughput.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
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

LATENCY = 0.1

JUDGE = """\
name: helpful
description: Was the agent helpful
llm:
  provider: openai
  model: stub-model
instructions: |
  Return pass when the agent answered the customer's question correctly and politely,
  fail when it gave a wrong or rude answer, not_applicable when nothing was asked.
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


class Scenario(NamedTuple):
    rows: int
    concurrency: int
    target: float  # of the bare SDK


COLD_LARGE = Scenario(4000, 64, 0.85)
COLD_SMALL = Scenario(400, 16, 1.0)
CACHED_TARGET = 1.5  # of `introspection check`


class EvalRun(NamedTuple):
    """One timed ``judges eval`` run (a NamedTuple: bench/run.py loads this file without
    registering it in sys.modules, which a dataclass needs)."""

    wall: float
    requests: int  # as the report's usage counts them
    served: int  # as the stub counted them
    max_in_flight: int  # as the stub saw it


class Round(NamedTuple):
    """One round: per scenario the cold run and the bare SDK; the cached re-run and check."""

    cold: tuple[EvalRun, ...]
    bare_sdk: tuple[float, ...]
    cached: EvalRun
    check: float


_TOPICS = [
    ("Ma commande n°{i} n'est pas arrivée, j'ai payé 49,90 € la semaine dernière.",
     "Je suis désolé pour ce retard. La commande {i} est en transit ; livraison prévue "
     "d'ici 2–3 jours ouvrés."),
    ("Können Sie mir die Rechnung für Auftrag {i} schicken? Der Betrag war 120 €.",
     "Natürlich – die Rechnung für Auftrag {i} ist unterwegs an Ihre E-Mail-Adresse."),
    ("I was charged twice for order {i} (2 × €19.99). Can I get a refund?",
     "I see the duplicate charge on order {i}; I've opened refund RF-{i} — expect it "
     "within 5–7 business days."),
]


def judge_input(i: int) -> dict[str, object]:
    """A support conversation of about 1 KB, non-ASCII in every message."""
    question, answer = _TOPICS[i % len(_TOPICS)]
    return {"conversation_id": f"conv_{i:05d}", "events": [
        {"type": "message", "role": "user", "text": question.format(i=i)},
        {"type": "tool", "name": "lookup_order", "status": "ok",
         "input": {"order_id": f"ORD-{i}"},
         "output": {"status": "in_transit", "carrier": "DHL Express", "eta_days": 2,
                    "note": "Zustellung über Paketstation möglich — café du coin"}},
        {"type": "message", "role": "assistant", "text": answer.format(i=i)},
        {"type": "message", "role": "user", "text": "Merci beaucoup, c'est très clair !"},
        {"type": "message", "role": "assistant",
         "text": "Avec plaisir ! N'hésitez pas si vous avez d'autres questions."},
        {"type": "feedback", "rating": "positive", "comment": "réponse rapide et précise"}]}


def make_recipe(root: Path, rows: int) -> Path:
    """A recipe with one ungated judge and ``rows`` labelled, valid calibration rows (none
    in the held-out test split, so a plain ``judges eval`` evaluates every one)."""
    (root / "judges").mkdir(parents=True)
    (root / "SYSTEM.md").write_text("You are a support agent.\n", encoding="utf-8")
    (root / "judges" / "helpful.yaml").write_text(JUDGE, encoding="utf-8")
    lines = [json.dumps(fixture_envelope(judge_input(i), expected="pass",
                                         split=("train", "dev", None)[i % 3],
                                         runtime_url="https://runtime.example"),
                        ensure_ascii=False)
             for i in range(rows)]
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


def timed_eval(recipe: Path, env: dict[str, str], stub: StubModelServer,
               concurrency: int) -> EvalRun:
    """Run ``judges eval`` once in a subprocess; exit with its output if it fails."""
    served_before = len(stub.requests)
    stub.max_in_flight = 0
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "introspection_cli", "judges", "eval", str(recipe),
         "--concurrency", str(concurrency), "--format", "json"],
        env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if result.returncode != 0 or not result.stdout.strip():
        raise SystemExit(f"judges eval exited {result.returncode}: {result.stderr[-2000:]}")
    usage = json.loads(result.stdout)["usage"]
    return EvalRun(wall, int(usage["requests"]), len(stub.requests) - served_before,
                   stub.max_in_flight)


def timed_bare_sdk(bodies: Path, env: dict[str, str], stub: StubModelServer,
                   scenario: Scenario) -> float:
    """Run the bare-SDK script once; exit if it fails or did not send every request."""
    served_before = len(stub.requests)
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", _BARE_SDK_SCRIPT, str(bodies),
                             str(scenario.concurrency)], env=env, capture_output=True,
                            text=True, check=False)
    wall = time.perf_counter() - start
    if result.returncode != 0 or len(stub.requests) - served_before != scenario.rows:
        raise SystemExit(f"the bare-SDK script exited {result.returncode}: "
                         f"{result.stderr[-2000:]}")
    return wall


def timed_check(recipe: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "introspection_cli", "check", str(recipe)],
                            env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"check exited {result.returncode}: {result.stdout[-2000:]}")
    return wall


def run_rounds(runs: int, scenarios: tuple[Scenario, ...] = (COLD_LARGE, COLD_SMALL)
               ) -> list[Round]:
    """``runs`` timed rounds, after one that only warms the page cache."""
    rounds = []
    with tempfile.TemporaryDirectory() as tmp, StubModelServer(latency=LATENCY) as stub:
        recipes = {s: make_recipe(Path(tmp) / f"recipe-{s.rows}", s.rows) for s in scenarios}
        bodies = {s: write_request_bodies(recipes[s], Path(tmp) / f"bodies-{s.rows}.json")
                  for s in scenarios}
        for attempt in range(runs + 1):
            cold, bare = [], []
            for index, scenario in enumerate(scenarios):
                env = bench_env(OPENAI_BASE_URL=stub.openai_url, OPENAI_API_KEY="sk-bench",
                                INTROSPECTION_CACHE_DIR=str(Path(tmp) / f"cache-{attempt}-"
                                                                        f"{index}"))
                cold.append(timed_eval(recipes[scenario], env, stub, scenario.concurrency))
                if cold[-1].served != scenario.rows:  # every row, as the bare script sends
                    raise SystemExit(f"judges eval sent {cold[-1].served} requests for "
                                     f"{scenario.rows} rows")
                bare.append(timed_bare_sdk(bodies[scenario], env, stub, scenario))
            # The first scenario's cache is warm now: its re-run, and check of the recipe.
            env = bench_env(OPENAI_BASE_URL=stub.openai_url, OPENAI_API_KEY="sk-bench",
                            INTROSPECTION_CACHE_DIR=str(Path(tmp) / f"cache-{attempt}-0"))
            cached = timed_eval(recipes[scenarios[0]], env, stub, scenarios[0].concurrency)
            check = timed_check(recipes[scenarios[0]], env)
            if attempt:
                rounds.append(Round(tuple(cold), tuple(bare), cached, check))
    return rounds


def results(rounds: list[Round],
            scenarios: tuple[Scenario, ...] = (COLD_LARGE, COLD_SMALL)) -> list[BenchResult]:
    """The figures from timed rounds."""
    figures = []
    for index, scenario in enumerate(scenarios):
        name = f"eval: {scenario.rows} rows, {LATENCY * 1000:.0f} ms, c={scenario.concurrency}"
        figures.append(BenchResult(
            name, min(r.cold[index].wall for r in rounds), "s", "bare AsyncOpenAI",
            min(r.bare_sdk[index] for r in rounds), scenario.target))
        if index == 0:
            # A count: the worst run is the one that matters.
            figures.append(BenchResult(
                f"eval: c={scenario.concurrency}, in flight short of it",
                scenario.concurrency - min(r.cold[index].max_in_flight for r in rounds),
                "requests", None, None, 0))
    rows = scenarios[0].rows
    figures += [
        BenchResult(f"eval: cached re-run, {rows} rows", min(r.cached.wall for r in rounds), "s",
                    "check", min(r.check for r in rounds), CACHED_TARGET),
        BenchResult("eval: cached re-run requests",
                    max(max(r.cached.requests, r.cached.served) for r in rounds), "requests",
                    None, None, 0),
    ]
    return figures


def measure(runs: int = 3) -> list[BenchResult]:
    """The figures, each the best of ``runs`` rounds."""
    return results(run_rounds(runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    load_before = os.getloadavg()
    rounds = run_rounds(max(1, args.runs))
    print(table(results(rounds)))
    print()
    for number, r in enumerate(rounds, start=1):
        print(f"round {number}: cold " + ", ".join(f"{run.wall:.2f}" for run in r.cold)
              + " s; bare SDK " + ", ".join(f"{wall:.2f}" for wall in r.bare_sdk)
              + f" s; cached {r.cached.wall:.2f} s; check {r.check:.2f} s; in flight "
              + ", ".join(str(run.max_in_flight) for run in r.cold))
    print(f"load average before {load_before[0]:.2f}, after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
