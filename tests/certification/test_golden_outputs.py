"""Golden outputs: certify, verify, estimate, status and the eval dry run print exactly these
bytes, in text and in JSON.

Recorded before their renderers moved into ``reporting/`` behind the registry, to hold
what they print in place through the move. Only what no run can repeat is normalised:
the temporary recipe path and the times. To re-record after an intended change:
``UPDATE_GOLDEN=1 pytest tests/certification/test_golden_outputs.py``, and review the
diff of ``golden/``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.evaluation.conftest import UNGATED_JUDGE, fixture_row, write_recipe
from tests.evaluation.stub_model_server import StubModelServer
from tests.support.golden import check_golden, normalised, said

GOLDEN = Path(__file__).parent / "golden"
#: Every command, with its flags after the recipe: each is recorded in text and JSON.
COMMANDS = [
    ("certify", ["judges", "certify", "{root}", "--judge", "helpful"]),
    ("verify", ["judges", "certify", "{root}", "--judge", "helpful", "--verify"]),
    ("estimate", ["judges", "estimate", "{root}", "--judge", "helpful", "--passed", "61",
                  "--total", "100"]),
    ("status", ["judges", "status", "{root}"]),
    ("dry_run", ["judges", "eval", "{root}", "--dry-run", "--no-cache"]),
]


def _rows() -> list[dict[str, object]]:
    rows = [fixture_row(f"test_pass_{i}", f"hi {i} VERDICT:pass",
                        expected="pass", split="test") for i in range(20)]
    rows += [fixture_row(f"test_fail_{i}", f"hi {i} VERDICT:fail", expected="fail",
                         split="test") for i in range(18)]
    rows += [fixture_row(f"dev_{i}", f"dev {i} VERDICT:pass", expected=label, split="dev")
             for i, label in enumerate(["pass", "fail", "pass"])]
    return rows


@pytest.mark.usefixtures("stub")
def test_each_command_prints_its_golden_text_and_json(tmp_path: Path,
                                                      stub: StubModelServer) -> None:
    root = write_recipe(tmp_path / "recipe", {"helpful": (UNGATED_JUDGE, _rows())})
    env = {"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache")}
    record_each_format(COMMANDS, root, env)


def record_each_format(commands: list[tuple[str, list[str]]], root: Path,
                       env: dict[str, str]) -> None:
    """Each command (``{root}`` in its arguments the recipe) in text and JSON, against
    its golden files."""
    for name, command in commands:
        for fmt in ("text", "json"):
            args = [arg.format(root=root) for arg in command]
            result = run_cli([*args, "--format", fmt], env=env)
            check_golden(GOLDEN / f"{name}.{fmt}", normalised(said(result), root))
