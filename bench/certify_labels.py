"""How many labels does a certificate take: rounds of 20 with sequential certification,
against the fixed plan?

A seeded simulation of labelling campaigns for one judge whose true TPR and TNR
are 0.95 (bar 0.80), 1,000 campaigns each way, every label a pass or a fail
with probability one half:

- **rounds of 20** (ours, the workflow of docs/labelling.md): label 20, send
  them to test (`judges split --fill-test`), `judges certify`; repeat. A round
  whose test split holds fewer than 16 rows of a class is insufficient data
  (decided from the file, no look); the first look is decided with the Wilson
  bound, every later one with the anytime-valid bound; at most 20 looks.
- **the fixed plan at 20:40:40** (baseline): label until the test split holds
  the plan's rows of each class, planned with 80% power at the true 0.95 (54;
  the most favourable plan: no campaign knows its true rate), at the default
  ratios (40% of labels reach test), then certify once.
- **the fixed plan before any dev figure** (second baseline): the plan `judges
  plan` gives with nothing measured (rate 0.9 assumed: 142 of each class), every
  label sent to test, one look.

Figures: the median number of labels to a certificate (a campaign never
certified counts as infinitely many), ours against each baseline (target: at
most half); and the false-certification rate per class at a true rate of 0.80
over the 20 looks (20,000 campaigns, the other class perfect; target at most
2.5%). Thresholds come from introspection's own bounds (Wilson's and the
anytime-valid one's k*(n)), so this measures the procedure `judges certify`
runs. About two seconds.

Run: python bench/certify_labels.py [--campaigns N]
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _timing import BenchResult, table

from introspection_cli.certification.bounds import ANYTIME, WILSON, BoundMethod, plan_for

BAR, ALPHA = 0.8, 0.025
PER_ROUND, MAX_LOOKS, ROUNDS = 20, 20, 150
SEED = 22


def _thresholds(method: BoundMethod, top: int) -> np.ndarray:
    """k*(n) for n = 0..top: the fewest agreeing rows of n whose bound reaches the bar."""
    return np.array([method.threshold(n, BAR, ALPHA) for n in range(top + 1)])


WILSON_K = _thresholds(WILSON, PER_ROUND * ROUNDS)
ANYTIME_K = _thresholds(ANYTIME, PER_ROUND * ROUNDS)


def rounds_of_20(rng: np.random.Generator, tpr: float, tnr: float,
                 campaigns: int) -> np.ndarray:
    """Labels to a certificate in rounds (inf: not certified within 20 looks)."""
    passes = rng.binomial(PER_ROUND, 0.5, (campaigns, ROUNDS))
    fails = PER_ROUND - passes
    rows = {"pass": np.cumsum(passes, axis=1), "fail": np.cumsum(fails, axis=1)}
    agreed = {"pass": np.cumsum(rng.binomial(passes, tpr), axis=1),
              "fail": np.cumsum(rng.binomial(fails, tnr), axis=1)}
    looking = (rows["pass"] >= 16) & (rows["fail"] >= 16)
    look = np.cumsum(looking, axis=1)
    labels = np.full(campaigns, np.inf)
    for round_ in range(ROUNDS):
        certified = looking[:, round_] & (look[:, round_] <= MAX_LOOKS) & np.isinf(labels)
        for label in rows:
            n = rows[label][:, round_]
            needed = np.where(look[:, round_] == 1, WILSON_K[n], ANYTIME_K[n])
            certified &= agreed[label][:, round_] >= needed
        labels[certified] = (round_ + 1) * PER_ROUND
    return labels


def fixed_plan(rng: np.random.Generator, tpr: float, tnr: float, campaigns: int, *,
               planned_at: float, test_share: float) -> np.ndarray:
    """Labels to a certificate with a fixed plan and one look (inf: not certified)."""
    plan = plan_for(WILSON, {"pass": planned_at, "fail": planned_at}, {}, bar=BAR,
                    alpha=ALPHA, test_share=test_share, class_mix={"pass": 0.5, "fail": 0.5})
    rows = plan.classes["pass"].rows
    assert rows is not None
    # The split is stratified: test_share of each class's labels reach test, so a campaign
    # labels until it has rows / test_share of both classes.
    per_class = math.ceil(rows / test_share - 1e-9)
    draws = rng.random((campaigns, 4 * per_class)) < 0.5
    enough = (np.cumsum(draws, axis=1) >= per_class) & (np.cumsum(~draws, axis=1) >= per_class)
    labels = (np.argmax(enough, axis=1) + 1).astype(float)
    certified = (rng.binomial(rows, tpr, campaigns) >= WILSON_K[rows]) & \
        (rng.binomial(rows, tnr, campaigns) >= WILSON_K[rows])
    return np.where(certified, labels, np.inf)


def measure(runs: int = 1, campaigns: int = 1_000) -> list[BenchResult]:
    """The medians and the false-certification rate (``runs`` is unused: one seeded run)."""
    rng = np.random.default_rng(SEED)
    ours = float(np.median(rounds_of_20(rng, 0.95, 0.95, campaigns)))
    ratios = float(np.median(fixed_plan(rng, 0.95, 0.95, campaigns, planned_at=0.95,
                                        test_share=0.4)))
    assumed = float(np.median(fixed_plan(rng, 0.95, 0.95, campaigns, planned_at=0.9,
                                         test_share=1.0)))
    wrong = float(np.isfinite(rounds_of_20(rng, 0.80, 1.0, 20 * campaigns)).mean())
    return [
        BenchResult("labels to a certificate at 0.95, rounds of 20", ours, "labels",
                    "fixed plan at 0.95, 20:40:40", ratios, 0.5),
        BenchResult("labels to a certificate at 0.95, rounds of 20", ours, "labels",
                    "fixed plan at 0.9, all to test", assumed, 0.5),
        BenchResult("false certification at 0.80, 20 looks, per class", 100 * wrong, "%",
                    None, None, 100 * ALPHA),
    ]


def details(campaigns: int = 1_000) -> str:
    """What the table leaves out: quartiles, certified shares, the fixed plan's own error."""
    rng = np.random.default_rng(SEED)
    lines = []
    for name, labels in (
            ("rounds of 20", rounds_of_20(rng, 0.95, 0.95, campaigns)),
            ("fixed plan at 0.95, 20:40:40", fixed_plan(
                rng, 0.95, 0.95, campaigns, planned_at=0.95, test_share=0.4)),
            ("fixed plan at 0.95, all to test", fixed_plan(
                rng, 0.95, 0.95, campaigns, planned_at=0.95, test_share=1.0)),
            ("fixed plan at 0.9, all to test", fixed_plan(
                rng, 0.95, 0.95, campaigns, planned_at=0.9, test_share=1.0))):
        done = labels[np.isfinite(labels)]
        quartiles = np.percentile(done, [25, 50, 75]) if done.size else [math.nan] * 3
        lines.append(f"{name}: certified {done.size / campaigns:.1%}; labels of the certified "
                     f"(25/50/75%): {quartiles[0]:.0f} / {quartiles[1]:.0f} / "
                     f"{quartiles[2]:.0f}")
    wrong = np.isfinite(fixed_plan(rng, 0.80, 1.0, 20 * campaigns, planned_at=0.95,
                                   test_share=0.4)).mean()
    lines.append(f"false certification at 0.80 of the fixed plan's one look (54 rows): "
                 f"{wrong:.2%}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--campaigns", type=int, default=1_000)
    args = parser.parse_args()
    print(table(measure(1, args.campaigns)))
    print()
    print(details(args.campaigns))


if __name__ == "__main__":
    main()
