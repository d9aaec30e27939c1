"""How fast `introspection check` is, against baselines measured in the same run.

1. A generated recipe with 500 realistic judge files (4 matchers, 3 regex
   literals each, drawn from the 11 patterns real gates share, a 6-line rubric):
   `introspection check` vs `check-jsonschema --schemafile
   schemas/judge.schema.json` on the same files (check-jsonschema does less: no
   positions, no regex compile, no cross-file rules). Target <= 0.25.
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
from _timing import BenchResult, paired_walls, table

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "fixtures" / "recipes" / "customer-support"

#: The regex literals real gates use, and how often: a recipe's judges share a
#: handful of patterns (a profile of 5,000 such judges saw 11 distinct ones).
PATTERNS = (
    r"/refund|money back|chargeback/i",
    r"/\binvoice\s+INV-\d{4,}\b/",
    r"/(?:cancel(?:led|lation)?|close my account)/i",
    r"/\b(?:card|iban|account) number\b/i",
    r"/^\s*(?:hi|hello|hey)\b/i",
    r"/password|locked out|reset link/i",
    r"/\b\d{3}-\d{2}-\d{4}\b/",
    r"/(?i)(?:angry|furious|unacceptable)/",
    r"/lookup_(?:invoice|order|customer)/",
    r"/\"status\":\s*\"(?:failed|declined)\"/",
    r"/thank(?:s| you)/i",
)

REALISTIC = """name: {name}
description: "Does the assistant handle {topic} the way the policy says?"
on:
  - event: message
    match:
      role: user
      text: {first}
  - event: tool
    match:
      name: {second}
      status: error
  - event: message
    match:
      role: assistant
      text: {third}
  - event: feedback
    match:
      rating: negative
llm:
  provider: {provider}
  model: {model}
  temperature: 0
  max_output_tokens: 800
instructions: |
  You grade one support conversation about {topic}.
  Return pass when the assistant follows the refund and billing policy, states
  the amount and the timeline it can promise, and gives the customer a clear next
  step. Return fail when it promises what the policy does not allow, quotes a
  wrong amount, exposes payment data, or leaves the customer without a next step.
  Return not_applicable when the conversation turns out not to be about {topic}.
"""

_TOPICS = ("refunds", "duplicate charges", "invoices", "cancellations", "payment failures",
           "account lockouts", "billing addresses", "VAT numbers")
_MODELS = (("openai", "gpt-5.6-luna"), ("anthropic", "claude-sonnet-5"))


def make_recipe(root: Path, judges: int) -> list[Path]:
    """A recipe of ``judges`` realistic judge files: 4 matchers, 3 regex literals each."""
    (root / "judges").mkdir(parents=True)
    (root / "SYSTEM.md").write_text("You are a support assistant.\n")
    files = []
    for i in range(judges):
        name = f"judge-{i:04d}"
        first, second, third = (PATTERNS[(i * 3 + k) % len(PATTERNS)] for k in range(3))
        provider, model = _MODELS[i % 2]
        text = REALISTIC.format(name=name, topic=_TOPICS[i % len(_TOPICS)], first=first,
                                second=second, third=third, provider=provider, model=model)
        if provider == "anthropic":  # it takes no temperature (check warns otherwise)
            text = text.replace("  temperature: 0\n", "")
        path = root / "judges" / f"{name}.yaml"
        path.write_text(text)
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
        ours_big, theirs = paired_walls(
            [*ours, str(recipe)],
            [cjs, "--schemafile", str(REPO / "schemas" / "judge.schema.json"), *map(str, files)],
            runs=runs)
    ours_example, floor = paired_walls([*ours, str(EXAMPLE)],
                                       [sys.executable, "-c", "import yaml, jsonschema"],
                                       runs=runs)
    return [
        BenchResult("check: 500 realistic judges", ours_big, "s", "check-jsonschema", theirs,
                    0.25),
        BenchResult("check: bundled example recipe", ours_example, "s",
                    "import yaml, jsonschema", floor, 1.3),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    print(table(measure(parser.parse_args().runs)))


if __name__ == "__main__":
    main()
