"""label and split never load a model SDK, Jinja2, Rich or an HTTP client library."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.labelling.recipes import GATED_JUDGE, row, write_recipe

HEAVY = ("openai", "anthropic", "jinja2", "rich", "httpx", "httpx2")


@pytest.mark.parametrize("args", [
    ["judges", "split", "{recipe}", "--dry-run"],
    ["judges", "label", "{recipe}", "--set", "1=pass"],
    ["judges", "label", "{recipe}", "--to-csv", "{tmp}/sheet.csv"],
])
def test_labelling_commands_import_nothing_heavy(tmp_path: Path, args: list[str]) -> None:
    recipe = write_recipe(tmp_path / "r", {"billing": (GATED_JUDGE, [row("c1", "refund")])})
    argv = [a.format(recipe=recipe, tmp=tmp_path) for a in args]
    code = ("import sys\n"
            "from introspection_cli.cli.app import main\n"
            "try:\n"
            f"    main({argv!r})\n"
            "except SystemExit as exc:\n"
            "    assert exc.code == 0, exc.code\n"
            "import introspection_cli.labelling.app.server, introspection_cli.labelling.app.run\n"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=False, cwd=REPO)
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stdout + result.stderr
