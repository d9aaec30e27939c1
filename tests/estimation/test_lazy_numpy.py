"""numpy is imported on ``judges estimate``'s path only: ``check`` and ``status`` stay as fast."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, REPO
from tests.evaluation.conftest import GATED_JUDGE, fixture_row, write_recipe

_PROBE = ("import sys\n"
          "from introspection_cli.cli.app import main\n"
          "try:\n"
          "    main(sys.argv[1:])\n"
          "except SystemExit:\n"
          "    pass\n"
          "print('numpy loaded:', 'numpy' in sys.modules)\n")


def _numpy_loaded(args: list[str], tmp_path: Path) -> bool:
    result = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True,
                            text=True, check=False, cwd=REPO, timeout=60,
                            env={"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache"),
                                 "PATH": "/usr/bin:/bin"})
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("numpy loaded:"), result.stdout + result.stderr
    return last == "numpy loaded: True"


@pytest.fixture
def recipe(tmp_path: Path) -> Path:
    rows = [fixture_row(f"c{i}", f"refund {i}", expected="pass" if i % 2 else "fail",
                        split="test") for i in range(40)]
    return write_recipe(tmp_path / "r", {"billing": (GATED_JUDGE, rows)})


def test_check_does_not_import_numpy(recipe: Path, tmp_path: Path) -> None:
    assert not _numpy_loaded(["check", str(recipe)], tmp_path)
    case = FIXTURES / "invalid" / "judge-not-certified-stale"
    assert not _numpy_loaded(["check", str(case), "--require-certified"], tmp_path)


def test_status_does_not_import_numpy(recipe: Path, tmp_path: Path) -> None:
    assert not _numpy_loaded(["judges", "status", str(recipe)], tmp_path)


def test_the_probe_sees_numpy_when_the_estimators_are_loaded(tmp_path: Path) -> None:
    # The control: the same probe, after importing the estimators, reports numpy.
    code = "import introspection_cli.estimation.threeway\n" + _PROBE
    result = subprocess.run([sys.executable, "-c", code, "--version"], capture_output=True,
                            text=True, check=False, cwd=REPO, timeout=60)
    assert result.stdout.strip().splitlines()[-1] == "numpy loaded: True", result.stderr
