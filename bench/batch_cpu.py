"""Client CPU of ``judges eval --batch`` against a cold direct run, 4,000 rows, same stub.

Generates a recipe with 4,000 labelled rows and runs ``judges eval`` in a
subprocess twice per round, each on a fresh INTROSPECTION_CACHE_DIR, against
one stub on 127.0.0.1 that speaks both the direct Chat Completions API and
the Files + Batch API (tests/evaluation/stub_batch_server.py):

1. cold, direct: ``--concurrency 64``, 4,000 Chat Completions calls;
2. ``--batch --poll-interval 0.05``: one JSONL upload, one batch, a few polls
   (validating -> in_progress -> finalizing -> completed), one output file.

The figure is the client's CPU time per row (user + system of the child
process, from ``resource.getrusage(RUSAGE_CHILDREN)``, so the stub's own work in
this process is not counted) with ``--batch`` against the cold direct run; the
target is <= 0.25. CPU, not wall: the machine is shared, and the batch run's
wall is mostly the poll interval. Both runs pay the same start-up, recipe
check, row verification, prompt rendering, cache keys and report; ``--batch``
saves the per-request HTTP work of the SDK. ``ours`` is the best of ``runs``
rounds for each side.

Run: python bench/batch_cpu.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from _timing import BenchResult, bench_env, table  # noqa: E402

from tests.evaluation.stub_batch_server import StubBatchServer  # noqa: E402
from tests.fixture.rowmaker import fixture_envelope  # noqa: E402

ROWS = 4000
CONCURRENCY = 64
TARGET = 0.25

JUDGE = """\
name: helpful
description: Was the agent helpful
llm:
  provider: openai
  model: stub-model
instructions: |
  Return pass when the agent helped, fail when it did not, not_applicable otherwise.
"""


class Round(NamedTuple):
    """CPU seconds of one round's two runs (a NamedTuple: bench/run.py loads this file
    without registering it in sys.modules, which a dataclass needs)."""

    direct: float
    batch: float


def make_recipe(root: Path) -> Path:
    """One ungated judge with ROWS labelled, valid calibration rows."""
    (root / "judges").mkdir(parents=True)
    (root / "SYSTEM.md").write_text("You are a support agent.\n", encoding="utf-8")
    (root / "judges" / "helpful.yaml").write_text(JUDGE, encoding="utf-8")
    lines = []
    for i in range(ROWS):
        judge_input = {"conversation_id": f"conv_{i:05d}", "events": [
            {"type": "message", "role": "user", "text": f"Question {i}: where is my order?"},
            {"type": "message", "role": "assistant", "text": f"Order {i} ships tomorrow."}]}
        lines.append(json.dumps(fixture_envelope(
            # No test rows: the held-out split is not evaluated without --split test.
            judge_input, expected="pass", split=("train", "dev", None)[i % 3],
            runtime_url="https://runtime.example")))
    (root / "judges" / "helpful.calibration.jsonl").write_text("\n".join(lines) + "\n",
                                                               encoding="utf-8")
    return root


def child_cpu(command: list[str], env: dict[str, str]) -> float:
    """User + system CPU seconds of ``command``; exit with its output if it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command[3:6])} exited {result.returncode}: "
                         f"{result.stderr[-2000:]}")
    rows = json.loads(result.stdout)["judges"][0]["rows"]
    if sum(row["outcome"] == "pass" for row in rows) != ROWS:
        raise SystemExit(f"not every row passed: {result.stderr[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def run_rounds(runs: int) -> list[Round]:
    """``runs`` timed rounds, after one that only warms the page cache."""
    rounds = []
    with tempfile.TemporaryDirectory() as tmp, StubBatchServer() as stub:
        recipe = make_recipe(Path(tmp) / "recipe")
        eval_command = [sys.executable, "-m", "introspection_cli", "judges", "eval",
                        str(recipe), "--format", "json"]
        for attempt in range(runs + 1):
            def env(name: str, attempt: int = attempt) -> dict[str, str]:
                return bench_env(OPENAI_BASE_URL=stub.openai_url, OPENAI_API_KEY="sk-bench",
                                 INTROSPECTION_CACHE_DIR=str(Path(tmp) / f"{name}-{attempt}"))

            direct = child_cpu([*eval_command, "--concurrency", str(CONCURRENCY)],
                               env("direct"))
            creations = stub.creations["openai"]
            batch = child_cpu([*eval_command, "--batch", "--poll-interval", "0.05"],
                              env("batch"))
            if stub.creations["openai"] != creations + 1:
                raise SystemExit("the --batch run did not create exactly one batch")
            if attempt:
                rounds.append(Round(direct, batch))
    return rounds


def results(rounds: list[Round]) -> list[BenchResult]:
    """The figure: CPU per row with --batch against the cold direct run."""
    direct = min(r.direct for r in rounds) / ROWS
    batch = min(r.batch for r in rounds) / ROWS
    return [BenchResult(f"eval --batch: CPU per row, {ROWS} rows", batch, "s",
                        "cold direct run", direct, TARGET)]


def measure(runs: int = 3) -> list[BenchResult]:
    """The figure, each side the best of ``runs`` rounds."""
    return results(run_rounds(runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    rounds = run_rounds(max(1, args.runs))
    print(table(results(rounds)))
    print()
    print("CPU seconds per run (direct, --batch): "
          + "; ".join(f"{r.direct:.2f}, {r.batch:.2f}" for r in rounds))


if __name__ == "__main__":
    main()
