"""How fast is `introspection judges plan`, against `judges status` on the same recipe?

The recipe of bench/status_speed.py: one gated judge, 20,000 realistic rows in
every split and label, a ledger holding an outcome for every row (so both
commands score dev figures) and an exposure file of three looks at the test rows.
`judges plan --judge billing` also renders the prompts of the file's first 16
rows (Jinja2) to estimate a call's tokens and reads the price table; `judges
status --judge billing` is the baseline, run alternately in the same run
(bench/_timing.paired_walls), and again on 2,000 rows. Target: plan / status <= 1.2.

Run: python bench/plan_speed.py [--runs N] [--rows N]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _timing import BenchResult, paired_walls, table
from status_speed import generated_recipe, introspection_argv


def measure(runs: int = 5, rows: int = 20_000) -> list[BenchResult]:
    """`judges plan` against `judges status` on the same recipe, run alternately: on the
    20,000-row recipe and on a tenth of it, where plan's fixed cost (Jinja2 and the prompt
    templates, to estimate a call's tokens) weighs more."""
    introspection = introspection_argv()
    results = []
    for size in (rows, rows // 10):
        with generated_recipe(size) as recipe:
            plan, status = paired_walls(
                [*introspection, "judges", "plan", str(recipe), "--judge", "billing"],
                [*introspection, "judges", "status", str(recipe), "--judge", "billing"],
                runs=runs)
        results.append(BenchResult(f"judges plan: {size:,} rows, 1 gated judge", plan, "s",
                                   "judges status, same recipe", status, 1.2))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rows", type=int, default=20_000)
    args = parser.parse_args()
    print(table(measure(args.runs, args.rows)))


if __name__ == "__main__":
    main()
