"""Golden outputs: ``judges render``, ``judges plan`` and ``judges status`` (with dev figures
and a rejected row) print exactly these bytes, in text and in JSON.

Recorded before their renderers moved into ``reporting/`` behind the registry (issue 27),
to hold what they print in place through the move; the companion of
tests/certification/test_golden_outputs.py, whose normalising and recording it shares.
To re-record after an intended change: ``UPDATE_GOLDEN=1 pytest
tests/certification/test_golden_judges_outputs.py``, and review the diff of ``golden/``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.certification.test_golden_outputs import _rows, record_each_format
from tests.conftest import run_cli
from tests.evaluation.conftest import GATED_JUDGE, UNGATED_JUDGE, fixture_row, write_recipe
from tests.evaluation.stub_model_server import StubModelServer

PRICES = """["stub-model"]
input = 2.0
cached_input = 0.5
output = 8.0
"""
#: Each output after the recipe's name, with its flags: recorded in text and JSON.
FRESH = [
    ("render", ["judges", "render", "{root}", "--judge", "helpful", "--line", "1"]),
    ("render_gated", ["judges", "render", "{root}", "--judge", "billing", "--line", "2"]),
    ("plan_fresh", ["judges", "plan", "{root}", "--judge", "helpful"]),
    ("plan_expected", ["judges", "plan", "{root}", "--judge", "helpful", "--expect-tpr",
                       "0.95", "--expect-tnr", "0.97", "--bar", "0.7", "--power", "0.9"]),
]
#: After ``judges eval --split dev`` and ``judges certify``: dev figures, looks at test.
EVALUATED = [
    ("plan_evaluated", ["judges", "plan", "{root}", "--judge", "helpful"]),
    ("status_evaluated", ["judges", "status", "{root}"]),
]


def _billing_rows() -> list[object]:
    return [fixture_row("b_refund", "a refund VERDICT:pass", expected="pass", split="dev"),
            fixture_row("b_weather", "the weather", expected="not_applicable", split="train"),
            fixture_row("b_invoice", "an invoice VERDICT:fail", expected=None),
            "{not json"]


@pytest.mark.usefixtures("stub")
def test_render_plan_and_status_print_their_golden_text_and_json(
        tmp_path: Path, stub: StubModelServer) -> None:
    root = write_recipe(tmp_path / "recipe", {"helpful": (UNGATED_JUDGE, _rows()),
                                              "billing": (GATED_JUDGE, _billing_rows())})
    prices = tmp_path / "prices.toml"
    prices.write_text(PRICES)
    env = {"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache"),
           "INTROSPECTION_PRICES": str(prices)}
    record_each_format(FRESH, root, env)
    for command in (["judges", "eval", str(root), "--judge", "helpful", "--split", "dev",
                     "--format", "json"],
                    ["judges", "certify", str(root), "--judge", "helpful", "--format", "json"]):
        done = run_cli(command, env=env)
        assert done.returncode in (0, 1), done.stderr
        json.loads(done.stdout)
    record_each_format(EVALUATED, root, env)
