"""Shared helpers for the bench scripts.

Every bench script exposes ``measure(runs: int) -> list[BenchResult]`` and a
``main()`` that prints :func:`table` of its results; ``bench/run.py`` calls
every script's ``measure`` and prints one table.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class BenchResult:
    """One figure: our value against a baseline measured in the same run.

    ``ratio`` is ours / baseline and must be <= ``target`` (for a figure with
    no baseline, such as "requests on a cached run", baseline is None and
    ``ours`` itself is compared with ``target``).
    """

    figure: str
    ours: float
    unit: str
    baseline_name: str | None
    baseline: float | None
    target: float

    @property
    def ratio(self) -> float | None:
        return None if self.baseline is None else self.ours / self.baseline

    @property
    def met(self) -> bool:
        value = self.ratio if self.ratio is not None else self.ours
        return value <= self.target


def bench_env(**extra: str) -> dict[str, str]:
    """The environment for measured commands: as an installed CLI runs.

    ``pip install`` compiles bytecode and Python caches it; a machine that sets
    PYTHONDONTWRITEBYTECODE (this sandbox does) would make every run of a source
    checkout recompile our modules, which no installed copy does. Applies to our
    commands and to the baselines alike.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(extra)
    return env


def _timed(command: Sequence[str], cwd: Path | None, env: dict[str, str],
           ok_codes: tuple[int, ...]) -> float:
    start = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, capture_output=True, check=False, env=env)
    elapsed = time.perf_counter() - start
    if result.returncode not in ok_codes:
        raise SystemExit(f"{' '.join(command)} exited {result.returncode}:\n"
                         f"{result.stdout.decode()[-2000:]}{result.stderr.decode()[-2000:]}")
    return elapsed


def median_wall(command: Sequence[str], *, runs: int = 7, cwd: Path | None = None,
                ok_codes: tuple[int, ...] = (0,)) -> float:
    """Median wall-clock seconds of ``command`` over ``runs`` runs (after one warm-up)."""
    env = bench_env()
    _timed(command, cwd, env, ok_codes)
    return statistics.median(_timed(command, cwd, env, ok_codes) for _ in range(runs))


def paired_walls(ours: Sequence[str], baseline: Sequence[str], *, runs: int = 7,
                 ok_codes: tuple[int, ...] = (0,)) -> tuple[float, float]:
    """Median wall-clock seconds of ``ours`` and of ``baseline``, run alternately.

    On a machine others share, the load drifts within seconds; alternating the two
    commands (after a warm-up of each) exposes both to the same load, so their
    ratio means something even when the absolute times do not.
    """
    env = bench_env()
    _timed(ours, None, env, ok_codes)
    _timed(baseline, None, env, (0,))
    pairs = [(_timed(ours, None, env, ok_codes), _timed(baseline, None, env, (0,)))
             for _ in range(runs)]
    return statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)


def _value(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "s":
        return f"{value * 1000:.1f} ms"
    return f"{value:,.1f} {unit}".strip()


def table(results: Sequence[BenchResult]) -> str:
    """A fixed-width table: figure, ours, baseline, ratio, target, met."""
    header = f"{'figure':<46} {'ours':>14} {'baseline':>28} {'ratio':>7} {'target':>13}  met"
    lines = [header, "-" * len(header)]
    for r in results:
        baseline = (f"{r.baseline_name} {_value(r.baseline, r.unit)}"
                    if r.baseline_name else "-")
        ratio = f"{r.ratio:.3f}" if r.ratio is not None else "-"
        # A ratio's target has no unit; a figure without a baseline is compared in its own.
        target = f"<= {r.target:g}" + (f" {r.unit}" if r.ratio is None else "")
        lines.append(f"{r.figure:<46} {_value(r.ours, r.unit):>14} {baseline:>28} {ratio:>7} "
                     f"{target:>13}  {'yes' if r.met else 'NO'}")
    return "\n".join(lines)
