"""Throughput of ``introspection judges eval`` against a stub model with 100 ms latency.

Builds recipes whose calibration rows are realistic conversations (several
messages and a tool call, with non-ASCII text in every row: €, –, é, ü), and runs
``judges eval`` in a subprocess with OPENAI_BASE_URL pointing at the stub
(tests/evaluation/stub_model_server.py: every request is answered 100 ms after it
arrives, concurrent requests overlap, and the stub counts the most requests it
was answering at one moment). Figures, per BenchResult:

1. a cold run of 2,000 rows at ``--concurrency 64`` against a raw aiohttp client
   (target <= 1.3): a script that posts the same 2,000 JSON bodies with one
   ``aiohttp.ClientSession`` and a semaphore, reads and parses each reply, and
   does nothing else: what the HTTP work costs without any SDK. The latency
   floor is 2,000 x 0.1 s / 64 = 3.125 s;
2. the same cold run against the bare SDK (target <= 1.0): the same bodies
   through ``openai.AsyncOpenAI`` (its default transport), nothing else;
3. the floor of that first target, not a figure of ours: the leanest client of the
   SDK there is (the same bodies through ``AsyncOpenAI`` on the SDK's aiohttp
   transport by its documented low-level ``post``, each reply taken as the raw
   response and parsed once: what our provider does, and nothing else) against
   the same raw aiohttp script. No run that sends through the SDK can be faster
   than this script, so when it misses 1.3 the first target cannot be met here;
4. how far the most requests in flight during that run, as the stub saw them,
   fell short of the concurrency (target 0: the run reaches 64);
5. 400 rows at ``--concurrency 16`` against the bare SDK (target <= 1.0);
6. a re-run of 4,000 rows on a warm cache against ``introspection check`` of the
   same recipe (target <= 1.5): both read and verify every calibration row; the
   cached run also finds every row's verdict (by its prompt memo, so it renders
   nothing) and writes the ledger and the report. The cache is filled once, by an
   untimed cold run before the rounds;
7. the requests that cached re-run made (target 0).

Each round runs every measured command once, the two sides of each ratio back to
back, ours first in odd rounds and the baseline first in even ones, so both see
the same machine; ``ours`` and the baselines are each the best of ``runs`` rounds,
as ``timeit`` advises (slower runs are other processes getting in the way).
``main()`` also prints every run's wall and CPU time (user + system of the child,
``getrusage``: the stub runs in this process and is not counted), their medians,
the median of each round's own ratio, and the load average.

Run: python bench/eval_throughput.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from _timing import BenchResult, bench_env, table  # noqa: E402

from tests.evaluation.stub_model_server import StubModelServer  # noqa: E402
from tests.fixture.rowmaker import fixture_envelope  # noqa: E402

LATENCY = 0.1
API_KEY = "sk-bench"

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

# The floor of any client of the SDK: the same bodies through one AsyncOpenAI client on the
# SDK's aiohttp transport, by its documented low-level post, the reply as the raw response
# parsed once (what our provider does, minus everything else a run does).
_LEAN_SDK_SCRIPT = """
import asyncio, json, sys
import httpx2, openai

async def main(bodies, concurrency):
    client = openai.AsyncOpenAI(max_retries=2, timeout=60.0,
                                http_client=openai.DefaultAioHttpClient())
    semaphore = asyncio.Semaphore(concurrency)

    async def one(body):
        async with semaphore:
            raw = await client.post("/chat/completions", body=body, cast_to=httpx2.Response)
            json.loads(raw.content)

    await asyncio.gather(*(one(body) for body in bodies))
    await client.close()

with open(sys.argv[1], encoding="utf-8") as handle:
    asyncio.run(main(json.load(handle), int(sys.argv[2])))
"""

# No SDK: the same bodies posted by one aiohttp session and a semaphore, each reply read
# and parsed, nothing else (no retries, no timeouts beyond aiohttp's, no error types).
_RAW_AIOHTTP_SCRIPT = """
import asyncio, json, os, sys
import aiohttp

async def main(bodies, concurrency):
    url = os.environ["OPENAI_BASE_URL"].rstrip("/") + "/chat/completions"
    headers = {"Authorization": "Bearer " + os.environ["OPENAI_API_KEY"],
               "Content-Type": "application/json"}
    semaphore = asyncio.Semaphore(concurrency)
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector, headers=headers) as session:

        async def one(body):
            async with semaphore:
                async with session.post(url, data=json.dumps(body)) as response:
                    response.raise_for_status()
                    json.loads(await response.read())

        await asyncio.gather(*(one(body) for body in bodies))

with open(sys.argv[1], encoding="utf-8") as handle:
    asyncio.run(main(json.load(handle), int(sys.argv[2])))
"""


class Scenario(NamedTuple):
    rows: int
    concurrency: int
    #: The ratio to each baseline that is the target, by baseline name.
    targets: tuple[tuple[str, float], ...]
    #: Also run the leanest SDK client, the floor of the raw aiohttp target.
    floor: bool = False

    @property
    def baselines(self) -> tuple[str, ...]:
        """Every script run beside ``judges eval`` in a round of this scenario."""
        return tuple(name for name, _ in self.targets) + ((LEAN,) if self.floor else ())


RAW = "raw aiohttp"
BARE = "bare AsyncOpenAI"
LEAN = "leanest AsyncOpenAI"
COLD_LARGE = Scenario(2000, 64, ((RAW, 1.3), (BARE, 1.0)), floor=True)
COLD_SMALL = Scenario(400, 16, ((BARE, 1.0),))
CACHED_ROWS = 4000
CACHED_TARGET = 1.5  # of `introspection check`


class Timed(NamedTuple):
    """One timed subprocess (a NamedTuple: bench/run.py loads this file without
    registering it in sys.modules, which a dataclass needs)."""

    wall: float
    cpu: float  # user + system of the child


class EvalRun(NamedTuple):
    """One timed ``judges eval`` run."""

    time: Timed
    requests: int  # as the report's usage counts them
    served: int  # as the stub counted them
    max_in_flight: int  # as the stub saw it


class Round(NamedTuple):
    """One round: per scenario the cold run and each baseline; the cached re-run and check."""

    cold: tuple[EvalRun, ...]
    baselines: tuple[dict[str, Timed], ...]
    cached: EvalRun
    check: Timed


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
    """The exact ``chat.completions.create`` arguments eval sends, for the baseline scripts."""
    from introspection_cli.evaluation.plan import load_valid_recipe, plan_judge
    from introspection_cli.evaluation.providers.openai_provider import request_body

    plan = plan_judge(load_valid_recipe(recipe)[0].judges["helpful"], splits=(), provider=None,
                      model=None, regex_timeout=1.0)
    bodies = [request_body(plan.request_for(row)) for row in plan.rows if row.calls_model]
    path.write_text(json.dumps(bodies), encoding="utf-8")
    return path


def timed(command: Sequence[str], env: dict[str, str]
          ) -> tuple[Timed, subprocess.CompletedProcess[str]]:
    """Run ``command`` once: its wall and CPU time, and its result."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Timed(wall, cpu), result


def timed_eval(recipe: Path, env: dict[str, str], stub: StubModelServer,
               concurrency: int) -> EvalRun:
    """Run ``judges eval`` once in a subprocess; exit with its output if it fails."""
    served_before = len(stub.requests)
    stub.max_in_flight = 0
    took, result = timed([sys.executable, "-m", "introspection_cli", "judges", "eval",
                          str(recipe), "--concurrency", str(concurrency), "--format", "json"],
                         env)
    if result.returncode != 0 or not result.stdout.strip():
        raise SystemExit(f"judges eval exited {result.returncode}: {result.stderr[-2000:]}")
    usage = json.loads(result.stdout)["usage"]
    return EvalRun(took, int(usage["requests"]), len(stub.requests) - served_before,
                   stub.max_in_flight)


def timed_script(name: str, script: str, bodies: Path, env: dict[str, str],
                 stub: StubModelServer, scenario: Scenario) -> Timed:
    """Run a baseline script once; exit if it fails or did not send every request."""
    served_before = len(stub.requests)
    took, result = timed([sys.executable, "-c", script, str(bodies),
                          str(scenario.concurrency)], env)
    if result.returncode != 0 or len(stub.requests) - served_before != scenario.rows:
        raise SystemExit(f"the {name} script exited {result.returncode}: "
                         f"{result.stderr[-2000:]}")
    return took


def timed_check(recipe: Path, env: dict[str, str]) -> Timed:
    took, result = timed([sys.executable, "-m", "introspection_cli", "check", str(recipe)], env)
    if result.returncode != 0:
        raise SystemExit(f"check exited {result.returncode}: {result.stdout[-2000:]}")
    return took


_SCRIPTS = {RAW: _RAW_AIOHTTP_SCRIPT, BARE: _BARE_SDK_SCRIPT, LEAN: _LEAN_SDK_SCRIPT}


def in_order(ours_first: bool, ours: Callable[[], object], *baselines: Callable[[], object]
             ) -> None:
    """Run ours and the baselines back to back, ours first or last."""
    for step in ((ours, *baselines) if ours_first else (*baselines, ours)):
        step()


def cold_round(scenario: Scenario, recipe: Path, bodies: Path, env: dict[str, str],
               stub: StubModelServer, ours_first: bool) -> tuple[EvalRun, dict[str, Timed]]:
    """One cold run of ``scenario`` and one run of each of its baselines."""
    runs: list[EvalRun] = []
    baselines: dict[str, Timed] = {}

    def ours() -> None:
        runs.append(timed_eval(recipe, env, stub, scenario.concurrency))
        if runs[-1].served != scenario.rows:  # every row, as the baseline scripts send
            raise SystemExit(f"judges eval sent {runs[-1].served} requests for "
                             f"{scenario.rows} rows")

    def baseline(name: str) -> Callable[[], object]:
        return lambda: baselines.__setitem__(name, timed_script(
            name, _SCRIPTS[name], bodies, env, stub, scenario))

    in_order(ours_first, ours, *(baseline(name) for name in scenario.baselines))
    return runs[0], baselines


def cached_round(recipe: Path, env: dict[str, str], stub: StubModelServer, ours_first: bool
                 ) -> tuple[EvalRun, Timed]:
    """One re-run on the warm cache and one ``check`` of the same recipe."""
    found: list[EvalRun] = []
    checked: list[Timed] = []
    in_order(ours_first, lambda: found.append(timed_eval(recipe, env, stub, 64)),
             lambda: checked.append(timed_check(recipe, env)))
    return found[0], checked[0]


def run_rounds(runs: int, scenarios: tuple[Scenario, ...] = (COLD_LARGE, COLD_SMALL)
               ) -> list[Round]:
    """``runs`` timed rounds, after one that only warms the page cache."""
    rounds = []
    with tempfile.TemporaryDirectory() as tmp, StubModelServer(latency=LATENCY) as stub:
        recipes = {s: make_recipe(Path(tmp) / f"recipe-{s.rows}", s.rows) for s in scenarios}
        bodies = {s: write_request_bodies(recipes[s], Path(tmp) / f"bodies-{s.rows}.json")
                  for s in scenarios}
        cached_recipe = make_recipe(Path(tmp) / "recipe-cached", CACHED_ROWS)
        cached_env = bench_env(OPENAI_BASE_URL=stub.openai_url, OPENAI_API_KEY=API_KEY,
                               INTROSPECTION_CACHE_DIR=str(Path(tmp) / "cache-warm"))
        timed_eval(cached_recipe, cached_env, stub, 64)  # fills the cache the re-runs read
        for attempt in range(runs + 1):
            cold, baselines = [], []
            for index, scenario in enumerate(scenarios):
                env = bench_env(OPENAI_BASE_URL=stub.openai_url, OPENAI_API_KEY=API_KEY,
                                INTROSPECTION_CACHE_DIR=str(Path(tmp) / f"cache-{attempt}-"
                                                                        f"{index}"))
                run, measured = cold_round(scenario, recipes[scenario], bodies[scenario], env,
                                           stub, ours_first=attempt % 2 == 1)
                cold.append(run)
                baselines.append(measured)
            found, checked = cached_round(cached_recipe, cached_env, stub,
                                          ours_first=attempt % 2 == 1)
            if attempt:
                rounds.append(Round(tuple(cold), tuple(baselines), found, checked))
    return rounds


def results(rounds: list[Round],
            scenarios: tuple[Scenario, ...] = (COLD_LARGE, COLD_SMALL)) -> list[BenchResult]:
    """The figures from timed rounds."""
    figures = []
    for index, scenario in enumerate(scenarios):
        name = f"eval: {scenario.rows} rows, {LATENCY * 1000:.0f} ms, c={scenario.concurrency}"
        for baseline, target in scenario.targets:
            figures.append(BenchResult(
                name, min(r.cold[index].time.wall for r in rounds), "s", baseline,
                min(r.baselines[index][baseline].wall for r in rounds), target))
        if scenario.floor:
            # Not ours: how close to raw aiohttp any client of the SDK can come here.
            figures.append(BenchResult(
                f"floor: {LEAN}, {scenario.rows} rows", min(r.baselines[index][LEAN].wall
                                                           for r in rounds),
                "s", RAW, min(r.baselines[index][RAW].wall for r in rounds),
                dict(scenario.targets)[RAW]))
        if index == 0:
            # A count: the worst run is the one that matters.
            figures.append(BenchResult(
                f"eval: c={scenario.concurrency}, in flight short of it",
                scenario.concurrency - min(r.cold[index].max_in_flight for r in rounds),
                "requests", None, None, 0))
    figures += [
        BenchResult(f"eval: cached re-run, {CACHED_ROWS} rows",
                    min(r.cached.time.wall for r in rounds), "s", "check",
                    min(r.check.wall for r in rounds), CACHED_TARGET),
        BenchResult("eval: cached re-run requests",
                    max(max(r.cached.requests, r.cached.served) for r in rounds), "requests",
                    None, None, 0),
    ]
    return figures


def measure(runs: int = 3) -> list[BenchResult]:
    """The figures, each the best of ``runs`` rounds."""
    return results(run_rounds(runs))


def medians(rounds: list[Round], scenarios: tuple[Scenario, ...] = (COLD_LARGE, COLD_SMALL)
            ) -> list[str]:
    """A line per measured command: the median wall and CPU over the rounds."""

    def line(name: str, times: list[Timed]) -> str:
        return (f"  {name:<34} wall {statistics.median(t.wall for t in times):6.2f} s, "
                f"CPU {statistics.median(t.cpu for t in times):6.2f} s")

    lines = []
    for index, scenario in enumerate(scenarios):
        label = f"{scenario.rows} rows c={scenario.concurrency}"
        lines.append(line(f"eval, {label}", [r.cold[index].time for r in rounds]))
        lines += [line(f"{baseline}, {label}", [r.baselines[index][baseline] for r in rounds])
                  for baseline in scenario.baselines]
    lines.append(line(f"eval cached, {CACHED_ROWS} rows", [r.cached.time for r in rounds]))
    lines.append(line(f"check, {CACHED_ROWS} rows", [r.check for r in rounds]))
    return lines


def ratio_medians(rounds: list[Round],
                  scenarios: tuple[Scenario, ...] = (COLD_LARGE, COLD_SMALL)) -> list[str]:
    """A line per target: the median over the rounds of each round's own ratio (both
    sides of it ran back to back, so a busy moment weighs on both), and its range."""

    def line(name: str, ratios: list[float], target: float | None) -> str:
        return (f"  {name:<44} median {statistics.median(ratios):.3f} "
                f"(rounds {min(ratios):.3f}-{max(ratios):.3f}"
                + (f", target <= {target})" if target is not None else ")"))

    lines = []
    for index, scenario in enumerate(scenarios):
        label = f"eval {scenario.rows} rows c={scenario.concurrency}"
        lines += [line(f"{label} / {baseline}",
                       [r.cold[index].time.wall / r.baselines[index][baseline].wall
                        for r in rounds], target)
                  for baseline, target in scenario.targets]
        if scenario.floor:
            lines.append(line(f"floor: {LEAN} / {RAW}",
                              [r.baselines[index][LEAN].wall / r.baselines[index][RAW].wall
                               for r in rounds], dict(scenario.targets)[RAW]))
            lines.append(line(f"{label} / {LEAN}",  # what a run adds to the floor
                              [r.cold[index].time.wall / r.baselines[index][LEAN].wall
                               for r in rounds], None))
    lines.append(line(f"eval cached {CACHED_ROWS} rows / check",
                      [r.cached.time.wall / r.check.wall for r in rounds], CACHED_TARGET))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    load_before = os.getloadavg()
    rounds = run_rounds(max(1, args.runs))
    print(table(results(rounds)))
    print()
    for number, r in enumerate(rounds, start=1):
        cold = "; ".join(
            f"eval {run.time.wall:.2f} s (CPU {run.time.cpu:.2f}), "
            + ", ".join(f"{name} {t.wall:.2f} s (CPU {t.cpu:.2f})" for name, t in base.items())
            for run, base in zip(r.cold, r.baselines, strict=True))
        print(f"round {number}: {cold}; cached {r.cached.time.wall:.2f} s (CPU "
              f"{r.cached.time.cpu:.2f}), check {r.check.wall:.2f} s (CPU {r.check.cpu:.2f}); "
              "in flight " + ", ".join(str(run.max_in_flight) for run in r.cold))
    print("medians:")
    print("\n".join(medians(rounds)))
    print("per-round ratios:")
    print("\n".join(ratio_medians(rounds)))
    print(f"load average before {load_before[0]:.2f}, after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
