"""How fast is `introspection judges status`, against `introspection check` on the same recipe?

A generated recipe with one gated judge (two regex matchers, as real gates
have) and a 20,000-row calibration file of realistic ~2 KB rows (the rows of
bench/fixture_speed.py), every split and label. The evaluation ledger beside a
temporary cache holds an outcome for every row under the judge's current
fingerprint, as after one full `judges eval`, so status scores dev figures;
the judge's exposure file holds three looks at its test rows (two judge
versions), which status derives the exposure from and check validates. Both commands run alternately
in the same run (bench/_timing.paired_walls). Target: status / check <= 1.2.

Run: python bench/status_speed.py [--runs N] [--rows N]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _timing import BenchResult, paired_walls, table
from fixture_speed import make_row

JUDGE = """name: billing
description: Did the assistant handle the billing request?
on:
  - event: message
    match:
      role: user
      text: /refund|invoice|charged twice/i
  - event: tool
    match:
      name: /^(lookup_invoice|create_refund)$/
      status: error
llm:
  provider: openai
  model: gpt-5.6-luna
  temperature: 0
instructions: |
  Return pass when the assistant resolves the billing request with a clear next step,
  fail when it promises what it cannot do or exposes payment data, and not_applicable
  when the conversation is not about billing.
"""


def make_recipe(root: Path, rows: int) -> Path:
    """The recipe, its calibration file, and a ledger of one full eval in ``root/cache``."""
    recipe = root / "recipe"
    (recipe / "judges").mkdir(parents=True)
    (recipe / "SYSTEM.md").write_text("You are a support assistant.\n")
    (recipe / "judges" / "billing.yaml").write_text(JUDGE)
    rng = random.Random(rows)
    generated = [make_row(index, rng) for index in range(rows)]
    with (recipe / "judges" / "billing.calibration.jsonl").open("w", encoding="utf-8") as out:
        for row in generated:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    _fill_ledger(root / "cache", recipe, generated)
    _write_looks(recipe, generated)
    return recipe


def _write_looks(recipe: Path, rows: list[dict[str, object]]) -> None:
    """Three looks at the test rows, as three evaluations of them would append."""
    from introspection_cli.certification.exposure_file import append_looks, exposure_path
    from introspection_cli.certification.exposure_record import test_look

    test = [(str(row["source"]["conversation_id"]), str(row["snapshot_hash"]),  # type: ignore[index]
             str(row["expected"]), str(row["expected"])) for row in rows
            if row["split"] == "test" and row["expected"] is not None]
    looks = [test_look(test, fingerprint="sha256:" + digit * 64, samples=1, temperature=0)
             for digit in "aab"]
    append_looks(exposure_path(recipe / "judges", "billing"), [look for look in looks if look])


def _fill_ledger(cache: Path, recipe: Path, rows: list[dict[str, object]]) -> None:
    from introspection_cli.evaluation.fingerprint import judge_fingerprint
    from introspection_cli.evaluation.ledger import EvaluatedRow, open_ledger
    from introspection_cli.recipe.checker import load_recipe

    judge = load_recipe(recipe)[0].judges["billing"]
    ledger = open_ledger(cache)
    ledger.record("billing", judge_fingerprint(judge), [
        EvaluatedRow(str(row["source"]["conversation_id"]),  # type: ignore[index]
                     row["split"], str(row["expected"]))  # type: ignore[arg-type]
        for row in rows])
    if ledger.warnings:
        raise SystemExit(f"could not fill the ledger: {ledger.warnings}")
    ledger.close()


def introspection_argv() -> list[str]:
    """The installed console script beside this Python, else ``python -m``."""
    script = Path(sys.executable).parent / "introspection"
    return [str(script)] if script.exists() else [sys.executable, "-m", "introspection_cli"]


@contextlib.contextmanager
def generated_recipe(rows: int) -> Iterator[Path]:
    """The recipe of :func:`make_recipe` in a temporary directory, with
    ``INTROSPECTION_CACHE_DIR`` pointing at its ledger while it is used."""
    with tempfile.TemporaryDirectory() as tmp:
        recipe = make_recipe(Path(tmp), rows)
        previous = os.environ.get("INTROSPECTION_CACHE_DIR")
        os.environ["INTROSPECTION_CACHE_DIR"] = str(Path(tmp) / "cache")
        try:
            yield recipe
        finally:
            if previous is None:
                os.environ.pop("INTROSPECTION_CACHE_DIR", None)
            else:
                os.environ["INTROSPECTION_CACHE_DIR"] = previous


def measure(runs: int = 5, rows: int = 20_000) -> list[BenchResult]:
    """`judges status` against `check` on the same recipe, run alternately."""
    introspection = introspection_argv()
    with generated_recipe(rows) as recipe:
        status, check = paired_walls([*introspection, "judges", "status", str(recipe)],
                                     [*introspection, "check", str(recipe)], runs=runs)
    return [BenchResult(f"judges status: {rows:,} rows, 1 gated judge", status, "s",
                        "check, same recipe", check, 1.2)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rows", type=int, default=20_000)
    args = parser.parse_args()
    print(table(measure(args.runs, args.rows)))


if __name__ == "__main__":
    main()
