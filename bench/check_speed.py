"""How fast `introspection check` is, against baselines measured in the same run.

1. A generated recipe with 500 judge files: `introspection check` vs
   `check-jsonschema --schemafile schemas/judge.schema.json` on the same files
   (check-jsonschema does less: no positions, no cross-file rules). Target <= 0.35.
2. The bundled example recipe vs `python -c "import yaml, jsonschema"`. Target <= 1.3.

Run: python bench/check_speed.py [--runs N]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import BenchResult, median_wall, table

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "fixtures" / "recipes" / "customer-support"

GATED = """name: {name}
description: "Did the assistant handle request type {i} correctly?"
on:
  - event: message
    match:
      role: user
      text: /refund|invoice|charge {i}/i
  - event: tool
    match:
      name: lookup_invoice
      status: error
llm:
  provider: openai
  model: gpt-5.6-luna
  temperature: 0
instructions: |
  Grade the assistant's handling of request type {i}.
  Return pass when the response follows the policy and gives a clear next step.
  Return fail when it makes an unsupported promise or exposes payment data.
  Return not_applicable when the matched message is not about this request type.
"""
UNGATED = """name: {name}
description: "Did the response resolve request {i}?"
llm:
  provider: anthropic
  model: claude-sonnet-5
  max_output_tokens: 800
instructions: |
  Return pass when it answers request {i}, fail when it avoids it, and
  not_applicable when there is no assistant response to grade.
"""


def make_recipe(root: Path, judges: int) -> list[Path]:
    (root / "judges").mkdir(parents=True)
    (root / "SYSTEM.md").write_text("You are a support assistant.\n")
    files = []
    for i in range(judges):
        name = f"judge-{i:04d}"
        path = root / "judges" / f"{name}.yaml"
        path.write_text((GATED if i % 2 else UNGATED).format(name=name, i=i))
        files.append(path)
    return files


def measure(runs: int = 7) -> list[BenchResult]:
    """Both figures, each against its baseline measured in this run."""
    bin_dir = Path(sys.executable).parent
    ours = [str(bin_dir / "introspection"), "check"]
    if not Path(ours[0]).exists():
        ours = [sys.executable, "-m", "introspection_cli", "check"]
    cjs = shutil.which("check-jsonschema", path=str(bin_dir)) or "check-jsonschema"
    with tempfile.TemporaryDirectory() as tmp:
        recipe = Path(tmp) / "big-recipe"
        files = make_recipe(recipe, 500)
        ours_big = median_wall([*ours, str(recipe)], runs=runs)
        theirs = median_wall([cjs, "--schemafile", str(REPO / "schemas" / "judge.schema.json"),
                              *map(str, files)], runs=runs)
    ours_example = median_wall([*ours, str(EXAMPLE)], runs=runs)
    floor = median_wall([sys.executable, "-c", "import yaml, jsonschema"], runs=runs)
    return [
        BenchResult("check: 500 judge files", ours_big, "s", "check-jsonschema", theirs, 0.35),
        BenchResult("check: bundled example recipe", ours_example, "s",
                    "import yaml, jsonschema", floor, 1.3),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    print(table(measure(parser.parse_args().runs)))


if __name__ == "__main__":
    main()
