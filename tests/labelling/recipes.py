"""Recipes with calibration files for the labelling tests."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.evaluation.conftest import GATED_JUDGE as _EVAL_GATED
from tests.evaluation.conftest import UNGATED_JUDGE as _EVAL_UNGATED
from tests.fixture.rowmaker import fixture_envelope

# The eval tests' judges (name billing, gated on refund|invoice; name helpful, ungated).
GATED_JUDGE = _EVAL_GATED.format(provider="openai")
UNGATED_JUDGE = _EVAL_UNGATED.format(provider="openai")


def row(conversation_id: str, user_text: str = "Where is my refund?", *,
        expected: str | None = None, split: str | None = None,
        events: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """A valid exported row; ``events`` replaces the default user/assistant exchange."""
    judge_input = {
        "conversation_id": conversation_id,
        "events": list(events) or [
            {"type": "message", "role": "user", "text": user_text},
            {"type": "tool", "name": "lookup_invoice", "input": {"invoice_id": "INV-2291"},
             "output": {"amount": 49.5, "charges": 2, "status": "paid"}, "status": "ok"},
            {"type": "message", "role": "assistant", "text": "I have opened refund RF-118."},
        ],
    }
    return fixture_envelope(judge_input, expected=expected, split=split,
                            runtime_url="https://runtime.example")


def write_recipe(root: Path, judges: dict[str, tuple[str, Sequence[dict[str, Any] | str]]],
                 *, newline: str = "\n") -> Path:
    """A recipe with ``judges``: name -> (judge YAML, calibration rows or raw lines)."""
    (root / "judges").mkdir(parents=True, exist_ok=True)
    (root / "SYSTEM.md").write_text("You are a support agent.\n", encoding="utf-8")
    for name, (yaml_text, rows) in judges.items():
        (root / "judges" / f"{name}.yaml").write_text(yaml_text, encoding="utf-8")
        lines = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows]
        (root / "judges" / f"{name}.calibration.jsonl").write_bytes(
            (newline.join(lines) + newline).encode("utf-8"))
    return root


def calibration(root: Path, name: str | None = None) -> Path:
    """The judge's calibration file (``name`` may be left out when there is only one)."""
    if name is None:
        (only,) = sorted((root / "judges").glob("*.calibration.jsonl"))
        return only
    return root / "judges" / f"{name}.calibration.jsonl"


def rows_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


#: A refund conversation of five events: a question, two tool calls, the answer, feedback.
REFUND_CONVERSATION: list[dict[str, Any]] = [
    {"type": "message", "role": "user",
     "text": "Hi, I was charged twice for invoice INV-2291. Can I get a refund?"},
    {"type": "tool", "name": "lookup_invoice", "input": {"invoice_id": "INV-2291"},
     "output": {"amount": 49.5, "charges": 2, "status": "paid", "customer": "cus_8812",
                "currency": "EUR"}, "status": "ok"},
    {"type": "tool", "name": "issue_refund",
     "input": {"invoice_id": "INV-2291", "amount": 49.5, "reason": "duplicate charge"},
     "output": {"refund_id": "RF-118", "state": "pending", "eta_days": 7}, "status": "ok"},
    {"type": "message", "role": "assistant",
     "text": "I see two charges of €49.50 on INV-2291. I've opened refund request RF-118 for "
             "the duplicate; you'll see it within 5–7 business days."},
    {"type": "feedback", "rating": "positive", "comment": "quick and clear"},
]
