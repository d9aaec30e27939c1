"""Throughput of ``introspection judges eval`` against a stub model with 100 ms latency.

Generates a recipe with 400 calibration rows, runs ``judges eval --concurrency 16``
in a subprocess with OPENAI_BASE_URL pointing at the stub and a fresh
INTROSPECTION_CACHE_DIR, and prints wall time ÷ ideal (400 × 0.1 s ÷ 16 = 2.5 s;
target ≤ 1.25). Then runs again on the warm cache and prints the requests made
(target 0) and the wall time (target ≤ 1 s). Prints numbers; asserts nothing.

    python bench/eval_throughput.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from introspection_cli.fixture import snapshot_hash  # noqa: E402
from tests.evaluation.stub_model_server import StubModelServer  # noqa: E402

ROWS = 400
LATENCY = 0.1
CONCURRENCY = 16
EXTRA = sys.argv[1:]  # e.g. --no-cache, to compare

JUDGE = """\
name: helpful
description: Was the agent helpful
llm:
  provider: openai
  model: stub-model
instructions: |
  Return pass when the agent helped, fail when it did not, not_applicable otherwise.
"""


def make_recipe(root: Path) -> Path:
    (root / "judges").mkdir(parents=True)
    (root / "SYSTEM.md").write_text("You are a support agent.\n", encoding="utf-8")
    (root / "judges" / "helpful.yaml").write_text(JUDGE, encoding="utf-8")
    lines = []
    for i in range(ROWS):
        judge_input = {"conversation_id": f"conv_{i:04d}", "events": [
            {"type": "message", "role": "user", "text": f"Question {i}: where is my order?"},
            {"type": "message", "role": "assistant", "text": f"Order {i} ships tomorrow."}]}
        lines.append(json.dumps({
            "schema_version": 1, "record_type": "judge_fixture", "ok": True,
            "engine": {"version": "2026.11.2", "protocol_version": 1, "contract_version": 1},
            "source": {"conversation_id": f"conv_{i:04d}",
                       "runtime_url": "https://runtime.example",
                       "exported_at": "2026-11-20T10:04:11Z"},
            "judge_input": judge_input, "snapshot_hash": snapshot_hash(judge_input),
            "expected": "pass", "split": ("train", "dev", "test", None)[i % 4]}))
    (root / "judges" / "helpful.calibration.jsonl").write_text("\n".join(lines) + "\n",
                                                               encoding="utf-8")
    return root


def timed_eval(recipe: Path, env: dict[str, str]) -> tuple[float, dict[str, object], int]:
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "introspection_cli", "judges", "eval", str(recipe),
         "--concurrency", str(CONCURRENCY), "--format", "json", *EXTRA],
        env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if not result.stdout.strip():
        sys.exit(f"eval failed (exit {result.returncode}): {result.stderr}")
    return wall, json.loads(result.stdout)["usage"], result.returncode


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, StubModelServer(latency=LATENCY) as stub:
        recipe = make_recipe(Path(tmp) / "recipe")
        env = {**os.environ, "OPENAI_BASE_URL": stub.openai_url,
               "OPENAI_API_KEY": "sk-bench", "INTROSPECTION_CACHE_DIR": str(Path(tmp) / "cache")}
        ideal = ROWS * LATENCY / CONCURRENCY
        cold, usage, code = timed_eval(recipe, env)
        print(f"cold run: {ROWS} rows, --concurrency {CONCURRENCY}, stub latency "
              f"{LATENCY * 1000:.0f} ms, exit {code}")
        print(f"  wall {cold:.2f} s, ideal {ideal:.2f} s, ratio {cold / ideal:.2f} "
              f"(target <= 1.25); requests {usage['requests']}")
        served = len(stub.requests)
        warm, usage, code = timed_eval(recipe, env)
        print(f"cached run: exit {code}, requests {usage['requests']} (stub saw "
              f"{len(stub.requests) - served}; target 0), cache hits {usage['cached']}, "
              f"wall {warm:.2f} s (target <= 1 s)")


if __name__ == "__main__":
    main()
