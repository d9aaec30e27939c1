"""How fast is calibration-file verification, and does its memory stay flat?

Generates calibration files of synthetic but realistic rows (judge_input about
2 KB: messages in several languages, tool calls with input/output objects,
feedback; a third of the rows hold whole-number amounts such as ``117.0``, as
exported tool outputs do) in a temporary directory, then reports, in one run:

1. ``verify_calibration_file`` time per 1,000 rows of a 20,000-row file against
   a plain ``json.loads`` of the same lines (the floor). Target: at most 3x.
2. Peak traced memory (tracemalloc) of the whole verification, every pass
   included, of a 100,000-row file against a 20,000-row file, each in a fresh
   subprocess. Target: at most 1.5x (flat: nothing may grow with the rows).

Run: python bench/fixture_speed.py [--runs N] [--rows N] [--big-rows N]
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _timing import BenchResult, table

from introspection_cli.fixture import verify_calibration_file
from tests.fixture.rowmaker import fixture_envelope

_TOPICS = ("a duplicate charge", "a refund for order {n}", "invoice INV-{n}", "a failed payment",
           "changing the billing address", "a VAT number on invoice INV-{n}")
_GREETINGS = ("Hello", "Grüß Gott", "Bonjour, c'est Zoë", "Hola, soy José", "Cześć",
              "こんにちは")


def make_row(index: int, rng: random.Random) -> dict[str, object]:
    """One labelled judge_fixture row whose judge_input is roughly 2 KB.

    Every third row's amounts are whole numbers written as floats (``117.0``),
    which RFC 8785 writes differently from ``json.dumps`` (``117``).
    """
    conversation_id = f"conv_bench_{index:07d}"
    invoice = f"INV-{rng.randint(1000, 9999)}"
    topic = rng.choice(_TOPICS).format(n=rng.randint(1000, 9999))
    whole = index % 3 == 0
    amount = float(rng.randint(10, 999)) if whole else rng.randint(1000, 99999) / 100
    refund = float(rng.randint(5, 99)) if whole else 49.5
    events: list[dict[str, object]] = [
        {"type": "message", "role": "user", "id": "ev_1", "at": "2026-11-20T10:00:00Z",
         "text": f"{rng.choice(_GREETINGS)}, I need help with {topic}. I was billed on "
                 f"{invoice} and the amount looks wrong compared to my plan, which should be "
                 f"€{rng.randint(10, 99)}.50 per month. Can you check what happened and fix "
                 "it please?"},
        {"type": "tool", "name": "lookup_invoice", "input": {"invoice_id": invoice},
         "output": {"amount": amount, "currency": "EUR", "charges": 2,
                    "status": "paid", "lines": [{"sku": "PLAN-PRO", "qty": 1},
                                                {"sku": "SEAT", "qty": rng.randint(1, 9)}]},
         "status": "ok", "id": "ev_2", "at": "2026-11-20T10:00:02Z"},
        {"type": "message", "role": "assistant", "id": "ev_3", "at": "2026-11-20T10:00:05Z",
         "text": f"Thanks for waiting. I looked up {invoice}: it was charged twice on the same "
                 "day. That is our mistake. I can refund the duplicate charge to the card on "
                 "file; it usually appears within 5–7 business days. Shall I go ahead?"},
        {"type": "message", "role": "user", "id": "ev_4", "at": "2026-11-20T10:01:10Z",
         "text": "Yes please, go ahead. Also, can you send me a corrected invoice by email?"},
        {"type": "tool", "name": "create_refund",
         "input": {"invoice_id": invoice, "reason": "duplicate_charge", "amount": refund},
         "output": {"refund_id": f"RF-{rng.randint(100, 999)}", "state": "pending"},
         "status": "ok", "id": "ev_5", "at": "2026-11-20T10:01:12Z"},
        {"type": "message", "role": "assistant", "id": "ev_6", "at": "2026-11-20T10:01:15Z",
         "text": "Done: the refund for the duplicate charge is on its way. I have also queued a "
                 "corrected invoice to the billing email on your account. Anything else I can "
                 "help with today?"},
        {"type": "feedback", "rating": rng.choice(["positive", "negative"]),
         "comment": "quick and clear, thanks", "id": "ev_7", "at": "2026-11-20T10:02:00Z"},
    ]
    judge_input = {"conversation_id": conversation_id, "events": events}
    return fixture_envelope(judge_input,
                            expected=rng.choice(["pass", "fail", "not_applicable"]),
                            split=rng.choice(["train", "dev", "test", None]),
                            source_extra={"deployment_id": "dep_bench",
                                          "recipe": "customer-support"})


def write_file(path: Path, rows: int) -> None:
    """Write ``rows`` generated rows, one JSON line each (seeded: the same file every run)."""
    rng = random.Random(rows)
    with path.open("w", encoding="utf-8") as handle:
        for index in range(rows):
            handle.write(json.dumps(make_row(index, rng), ensure_ascii=False) + "\n")


def time_json_loads(path: Path) -> float:
    """Seconds to read the file line by line and ``json.loads`` every line."""
    start = time.perf_counter()
    with path.open("rb") as handle:
        for raw in handle:
            json.loads(raw)
    return time.perf_counter() - start


def time_verification(path: Path) -> float:
    """Seconds for ``verify_calibration_file`` over the whole file (every row must pass)."""
    start = time.perf_counter()
    bad = sum(1 for result in verify_calibration_file(path) if result.row is None)
    elapsed = time.perf_counter() - start
    if bad:
        raise SystemExit(f"{bad} generated rows were rejected: the bench rows are wrong")
    return elapsed


# In a fresh interpreter, so that neither the file generation nor the other
# file's run is in the figure; tracemalloc sees every pass of the verification.
_MEMORY_PROBE = """
import collections, sys, tracemalloc
from pathlib import Path
from introspection_cli.fixture import verify_calibration_file
tracemalloc.start()
collections.deque(verify_calibration_file(Path(sys.argv[1])), maxlen=0)
print(tracemalloc.get_traced_memory()[1])
"""


def peak_memory(path: Path) -> int:
    """Peak traced bytes while verifying ``path`` (all passes), measured in a subprocess."""
    output = subprocess.run([sys.executable, "-c", _MEMORY_PROBE, str(path)], check=True,
                            capture_output=True, text=True).stdout
    return int(output)


def measure(runs: int = 3, rows: int = 20_000, big_rows: int = 100_000) -> list[BenchResult]:
    """Speed against json.loads (best of ``runs``) and peak memory at ``big_rows`` vs ``rows``."""
    with tempfile.TemporaryDirectory() as tmp:
        small, big = Path(tmp, "small.calibration.jsonl"), Path(tmp, "big.calibration.jsonl")
        write_file(small, rows)
        time_json_loads(small)  # warm the page cache for both measurements
        # bench/run.py imports every script, the eval ones' SDKs included, into this
        # process: frozen, those objects are not walked by every garbage collection
        # the rows trigger, as they never are in `introspection check`.
        gc.collect()
        gc.freeze()
        # Alternately, so that a load that drifts within the run hits both sides.
        pairs = [(time_json_loads(small), time_verification(small)) for _ in range(runs)]
        gc.unfreeze()
        floor = min(loads for loads, _ in pairs)
        verify = min(verified for _, verified in pairs)
        write_file(big, big_rows)
        small_peak, big_peak = peak_memory(small), peak_memory(big)
    per_1k = 1000 / rows
    return [
        BenchResult(f"fixture: verify {rows // 1000}k rows (per 1k rows)", verify * per_1k, "s",
                    "json.loads", floor * per_1k, 3.0),
        BenchResult(f"fixture: peak memory {big_rows // 1000}k vs {rows // 1000}k rows",
                    big_peak / 1e6, "MB", f"{rows // 1000}k rows", small_peak / 1e6, 1.5),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--big-rows", type=int, default=100_000)
    args = parser.parse_args()
    print(table(measure(args.runs, args.rows, args.big_rows)))


if __name__ == "__main__":
    main()
