"""How fast is calibration-file verification, and does its memory stay flat?

Generates calibration files of synthetic but realistic rows (judge_input about
2 KB: messages, tool calls with input/output objects, feedback) in a temporary
directory, then reports in one run:

* rows/s of ``verify_calibration_file`` next to rows/s of a plain ``json.loads``
  of the same lines (the floor), as a ratio (target: at most 4x);
* peak traced memory for 20,000 and 100,000 rows, each in a fresh subprocess,
  for the per-line pass (target: flat) and for the first pass, whose
  conversation-id index for the duplicate rule grows with the number of rows.

Run: ``python bench/fixture_speed.py`` (``--rows N`` to change the timed size).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from introspection_cli.fixture import snapshot_hash, verify_calibration_file

_TOPICS = ("a duplicate charge", "a refund for order {n}", "invoice INV-{n}", "a failed payment",
           "changing the billing address", "a VAT number on invoice INV-{n}")


def make_row(index: int, rng: random.Random) -> dict[str, object]:
    """One labelled judge_fixture row whose judge_input is roughly 2 KB."""
    conversation_id = f"conv_bench_{index:07d}"
    invoice = f"INV-{rng.randint(1000, 9999)}"
    topic = rng.choice(_TOPICS).format(n=rng.randint(1000, 9999))
    events: list[dict[str, object]] = [
        {"type": "message", "role": "user", "id": "ev_1", "at": "2026-11-20T10:00:00Z",
         "text": f"Hello, I need help with {topic}. I was billed on {invoice} and the amount "
                 f"looks wrong compared to my plan, which should be €{rng.randint(10, 99)}.50 "
                 "per month. Can you check what happened and fix it please?"},
        {"type": "tool", "name": "lookup_invoice", "input": {"invoice_id": invoice},
         "output": {"amount": rng.randint(1000, 99999) / 100, "currency": "EUR", "charges": 2,
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
         "input": {"invoice_id": invoice, "reason": "duplicate_charge", "amount": 49.5},
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
    return {"schema_version": 1, "record_type": "judge_fixture", "ok": True,
            "engine": {"version": "2026.11.2", "protocol_version": 1, "contract_version": 1},
            "source": {"conversation_id": conversation_id, "deployment_id": "dep_bench",
                       "recipe": "customer-support",
                       "runtime_url": "https://runtime.example.invalid",
                       "exported_at": "2026-11-20T10:04:11Z"},
            "judge_input": judge_input, "snapshot_hash": snapshot_hash(judge_input),
            "expected": rng.choice(["pass", "fail", "not_applicable"]),
            "split": rng.choice(["train", "dev", "test", None])}


def write_file(path: Path, rows: int) -> None:
    rng = random.Random(rows)
    with path.open("w", encoding="utf-8") as handle:
        for index in range(rows):
            handle.write(json.dumps(make_row(index, rng), ensure_ascii=False) + "\n")


def time_json_loads(path: Path) -> float:
    start = time.perf_counter()
    with path.open("rb") as handle:
        for raw in handle:
            json.loads(raw)
    return time.perf_counter() - start


def time_verification(path: Path) -> float:
    start = time.perf_counter()
    bad = sum(1 for result in verify_calibration_file(path) if result.row is None)
    elapsed = time.perf_counter() - start
    assert bad == 0, f"{bad} generated rows were rejected"
    return elapsed


_MEMORY_PROBE = """
import sys, tracemalloc
from pathlib import Path
import introspection_cli.fixture.reader as reader
path = Path(sys.argv[1])
tracemalloc.start()
duplicates = reader._duplicate_conversations(path)  # first pass: the conversation-id index
index_peak = tracemalloc.get_traced_memory()[1]
tracemalloc.reset_peak()
for _ in reader._verify_lines(path, duplicates):  # second pass: one line at a time
    pass
print(tracemalloc.get_traced_memory()[1], index_peak)
"""


def peak_memory(path: Path) -> tuple[int, int]:
    """Peak traced bytes of the per-line pass, and of the first pass (the id index)."""
    output = subprocess.run([sys.executable, "-c", _MEMORY_PROBE, str(path)], check=True,
                            capture_output=True, text=True).stdout.split()
    return int(output[0]), int(output[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--big-rows", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        small, big = Path(tmp, "small.calibration.jsonl"), Path(tmp, "big.calibration.jsonl")
        write_file(small, args.rows)
        size = small.stat().st_size
        print(f"{args.rows} rows, {size / 1e6:.1f} MB ({size / args.rows:.0f} B/row)")
        time_json_loads(small)  # warm the page cache for both measurements
        floor = min(time_json_loads(small) for _ in range(3))
        verify = min(time_verification(small) for _ in range(3))
        print(f"json.loads floor : {args.rows / floor:10,.0f} rows/s")
        print(f"verification     : {args.rows / verify:10,.0f} rows/s")
        print(f"ratio            : {verify / floor:.2f}x json.loads (target <= 4x)")
        write_file(big, args.big_rows)
        for label, path, rows in (("small", small, args.rows), ("big", big, args.big_rows)):
            per_line, index = peak_memory(path)
            print(f"peak memory {label:5} ({rows:>7,} rows): per-line pass {per_line / 1e6:6.2f} MB"
                  f", conversation-id index pass {index / 1e6:6.2f} MB")


if __name__ == "__main__":
    main()
