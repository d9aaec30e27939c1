"""Golden outputs: ``judges align`` (a run with a kept and a refused round, and the dry run)
prints exactly these bytes, in text and in JSON.

Recorded before its text renderer moved from ``alignment/`` into ``reporting/`` behind
the registry (issue 27), to hold what it prints in place through the move. Each run has
its own stub and cache, so text and JSON report the same calls. Only the temporary
recipe path is normalised. To re-record after an intended change: ``UPDATE_GOLDEN=1
pytest tests/alignment/test_golden_align.py``, and review the diff of ``golden/``.
"""

from __future__ import annotations

from pathlib import Path

from tests.alignment.conftest import HARMFUL, HELPFUL, StubFactory, write_align_recipe
from tests.conftest import run_cli
from tests.support.golden import check_golden, normalised, said

GOLDEN = Path(__file__).parent / "golden"
PRICES = '["stub-model"]\ninput = 1.0\ncached_input = 0.1\noutput = 10.0\n'


def _said(args: list[str], root: Path, env: dict[str, str]) -> str:
    result = run_cli(["judges", "align", str(root), "--judge", "support", "--max-retries", "0",
                      "--timeout", "10", *args], env=env)
    return normalised(said(result), root)


def test_a_run_and_a_dry_run_print_their_golden_text_and_json(
        tmp_path: Path, rubric_stub: StubFactory) -> None:
    root = write_align_recipe(tmp_path / "r")
    prices = tmp_path / "prices.toml"
    prices.write_text(PRICES)
    for fmt in ("text", "json"):
        rubric_stub([HARMFUL, HELPFUL])
        env = {"INTROSPECTION_CACHE_DIR": str(tmp_path / f"cache-{fmt}"),
               "INTROSPECTION_CONFIG_DIR": str(tmp_path / "config"),
               "INTROSPECTION_PRICES": str(prices)}
        check_golden(GOLDEN / f"dry_run.{fmt}", _said(["--dry-run", "--format", fmt], root, env))
        check_golden(GOLDEN / f"run.{fmt}",
                     _said(["--rounds", "2", "--no-cost-limit", "--format", fmt], root, env))
