"""How fast is `introspection judges plan`, against `judges status` on the same recipe?

The recipe of bench/status_speed.py: one gated judge, 20,000 realistic rows in
every split and label, a ledger holding an outcome for every row (so both
commands score dev figures) and an exposure file of three looks at the test rows.
`judges plan --judge billing` also renders the prompts of the file's first 16
rows (Jinja2) to estimate a call's tokens and reads the price table; `judges
status --judge billing` is the baseline, run alternately in the same run
(bench/_timing.paired_walls). Target: plan / status <= 1.2.

Run: python bench/plan_speed.py [--runs N] [--rows N]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _timing import BenchResult, paired_walls, table
from status_speed import make_recipe


def measure(runs: int = 5, rows: int = 20_000) -> list[BenchResult]:
    """`judges plan` against `judges status` on the same recipe, run alternately."""
    bin_dir = Path(sys.executable).parent
    introspection = [str(bin_dir / "introspection")]
    if not Path(introspection[0]).exists():
        introspection = [sys.executable, "-m", "introspection_cli"]
    with tempfile.TemporaryDirectory() as tmp:
        recipe = make_recipe(Path(tmp), rows)
        previous = os.environ.get("INTROSPECTION_CACHE_DIR")
        os.environ["INTROSPECTION_CACHE_DIR"] = str(Path(tmp) / "cache")
        try:
            plan, status = paired_walls(
                [*introspection, "judges", "plan", str(recipe), "--judge", "billing"],
                [*introspection, "judges", "status", str(recipe), "--judge", "billing"],
                runs=runs)
        finally:
            if previous is None:
                os.environ.pop("INTROSPECTION_CACHE_DIR", None)
            else:
                os.environ["INTROSPECTION_CACHE_DIR"] = previous
    return [BenchResult(f"judges plan: {rows:,} rows, 1 gated judge", plan, "s",
                        "judges status, same recipe", status, 1.2)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rows", type=int, default=20_000)
    args = parser.parse_args()
    print(table(measure(args.runs, args.rows)))


if __name__ == "__main__":
    main()
