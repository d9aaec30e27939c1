"""What the cross-run claims cost a cold run: the claims of 4,000 requests against the
verdict-cache writes of the same 4,000 verdicts.

A cold ``judges eval`` of 4,000 rows claims each uncached request before sending
it (``evaluation/claims.py``): the first chunk of 16 rows, then chunks of 256, one
transaction each, and lets go of every claim in one statement when it ends. It
writes the same 4,000 verdicts to the cache anyway, 32 per transaction
(``VerdictCache.write``). Both run on the cache's worker thread, beside the event
loop; the figure is the claims' CPU time against the writes' (target <= 0.5: the
claims may add at most half of what the cache already costs). CPU time of this
process, best of ``runs`` rounds, each on fresh files in a temporary directory.

Run: python bench/claims_cost.py [--runs N]
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from _timing import BenchResult, table  # noqa: E402

from introspection_cli.evaluation.cache import WRITE_BATCH, Entry, VerdictCache  # noqa: E402
from introspection_cli.evaluation.claims import ClaimBoard  # noqa: E402
from introspection_cli.evaluation.outcomes import Tokens  # noqa: E402
from introspection_cli.evaluation.slots import CHUNK_ROWS, FIRST_CHUNK_ROWS  # noqa: E402

ROWS = 4000
TARGET = 0.5


def _keys() -> list[str]:
    return [hashlib.sha256(f"row {i}".encode()).hexdigest() for i in range(ROWS)]


def claims_cpu(directory: Path, keys: list[str]) -> float:
    """CPU seconds of a cold run's claims: open, claim chunk by chunk, close."""
    chunks = [keys[:FIRST_CHUNK_ROWS]] + [keys[start:start + CHUNK_ROWS]
                                          for start in range(FIRST_CHUNK_ROWS, ROWS, CHUNK_ROWS)]
    start = time.process_time()
    board = ClaimBoard(directory)
    for chunk in chunks:
        if board.claim(chunk):
            raise SystemExit("a key was held by another run: the directory is not fresh")
    board.close()
    elapsed = time.process_time() - start
    if board.warnings:
        raise SystemExit(f"the claims board was not usable: {board.warnings}")
    return elapsed


def writes_cpu(directory: Path, keys: list[str]) -> float:
    """CPU seconds of writing the same run's verdicts, as the cache worker does."""
    entries: list[Entry] = [(key, "pass", f"stub reasoning for row {i}", f"memo-{key}",
                             Tokens(120, 30)) for i, key in enumerate(keys)]
    start = time.process_time()
    cache = VerdictCache(directory)
    for offset in range(0, ROWS, WRITE_BATCH):
        cache.write(entries[offset:offset + WRITE_BATCH])
    cache.close()
    return time.process_time() - start


def measure(runs: int = 7) -> list[BenchResult]:
    """The figure: the best of ``runs`` rounds for each side."""
    keys = _keys()
    ours, baseline = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for attempt in range(runs):
            ours.append(claims_cpu(Path(tmp) / f"claims-{attempt}", keys))
            baseline.append(writes_cpu(Path(tmp) / f"cache-{attempt}", keys))
    return [BenchResult(f"eval: claims of a cold {ROWS}-row run", min(ours), "s",
                        "its cache writes", min(baseline), TARGET)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    print(table(measure(max(1, parser.parse_args().runs))))


if __name__ == "__main__":
    main()
