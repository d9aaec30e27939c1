"""Shared helpers for the bench scripts: median wall time of a command."""

from __future__ import annotations

import statistics
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path


def median_wall(command: Sequence[str], *, runs: int = 7, cwd: Path | None = None,
                ok_codes: tuple[int, ...] = (0,)) -> float:
    """Median wall-clock seconds of ``command`` over ``runs`` runs (after one warm-up)."""
    times = []
    for attempt in range(runs + 1):
        start = time.perf_counter()
        result = subprocess.run(command, cwd=cwd, capture_output=True, check=False)
        elapsed = time.perf_counter() - start
        if result.returncode not in ok_codes:
            raise SystemExit(f"{' '.join(command)} exited {result.returncode}:\n"
                             f"{result.stdout.decode()[-2000:]}{result.stderr.decode()[-2000:]}")
        if attempt:
            times.append(elapsed)
    return statistics.median(times)


def row(figure: str, ours: float, baseline_name: str, baseline: float, target: float) -> str:
    ratio = ours / baseline
    met = "met" if ratio <= target else "NOT met"
    return (f"{figure:<44} ours {ours * 1000:8.1f} ms  {baseline_name} {baseline * 1000:8.1f} ms"
            f"  ratio {ratio:5.2f}  target <= {target:.2f}  {met}")
