"""Run every bench script and print one table: figure, ours, baseline, ratio, target, met.

Every ``bench/*.py`` that defines ``measure(runs) -> list[BenchResult]`` is
imported and run, in name order. This is a report, not a test: it exits 0
even when a target is missed, and a script that is missing ``measure`` or
fails is listed below the table instead of stopping the others.

Run: python bench/run.py [--runs N]
"""

from __future__ import annotations

import argparse
import importlib.util
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from _timing import BenchResult, table  # noqa: E402

#: Small enough that the whole run stays under about three minutes on two cores.
DEFAULT_RUNS = 3

Measure = Callable[[int], list[BenchResult]]


def bench_scripts() -> list[Path]:
    """Every bench script: ``bench/*.py`` except helpers (``_*.py``) and this runner."""
    return sorted(path for path in BENCH.glob("*.py")
                  if not path.name.startswith("_") and path.name != Path(__file__).name)


def load(path: Path) -> ModuleType:
    """Import a bench script by path, as ``bench_<name>`` (the scripts are not a package)."""
    spec = importlib.util.spec_from_file_location(f"bench_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it executes
    spec.loader.exec_module(module)
    return module


def run_all(runs: int) -> tuple[list[BenchResult], list[str]]:
    """Every script's results, and one note per script that could not report."""
    results: list[BenchResult] = []
    notes: list[str] = []
    for path in bench_scripts():
        started = time.perf_counter()
        try:
            measure: Measure | None = getattr(load(path), "measure", None)
            if measure is None:
                notes.append(f"{path.name}: no measure(runs) function; not run")
                continue
            results += measure(runs)
        # SystemExit too: the timing helpers exit when a measured command fails,
        # and one broken script must not hide the other scripts' figures.
        except (Exception, SystemExit) as exc:
            notes.append(f"{path.name}: failed: {type(exc).__name__}: {exc}".strip())
            continue
        notes.append(f"{path.name}: {time.perf_counter() - started:.0f} s")
    return results, notes


def main() -> None:
    """Parse ``--runs``, run every script, print the table and the notes; always exit 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS,
                        help=f"timed runs per figure (default {DEFAULT_RUNS})")
    args = parser.parse_args()
    started = time.perf_counter()
    results, notes = run_all(max(1, args.runs))
    print(table(results))
    print()
    met = sum(result.met for result in results)
    print(f"{met} of {len(results)} targets met; --runs {args.runs}; Python "
          f"{platform.python_version()}; {time.perf_counter() - started:.0f} s in all")
    for note in notes:
        print(f"  {note}")


if __name__ == "__main__":
    main()
