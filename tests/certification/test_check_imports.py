"""Verifying a certificate or an annotations file in ``check`` imports no model SDK,
Jinja2, Rich, HTTP client, jsonschema or numpy."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import FIXTURES, REPO

_HEAVY = ('openai', 'anthropic', 'jinja2', 'rich', 'httpx', 'httpx2', 'jsonschema', 'numpy',
          'sqlite3')


def _heavy_imports(args: list[str], loaded: str) -> str:
    """The heavy packages ``check ARGS`` imports (as a printed list), having asserted that
    the rule under test ran (``loaded`` was imported)."""
    code = ("import sys\n"
            "from introspection_cli.cli.app import main\n"
            "try:\n"
            f"    main({['check', *args]!r})\n"
            "except SystemExit:\n"
            "    pass\n"
            f"assert {loaded!r} in sys.modules\n"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {_HEAVY!r}))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=False, cwd=REPO)
    return result.stdout.strip().splitlines()[-1] if result.stdout.strip() else result.stderr


# A version 1 certificate; a version 2 one, whose run is found in its exposure file.
@pytest.mark.parametrize("name", ["judge-not-certified-stale", "certificate-stale"])
def test_check_verifies_a_certificate_without_heavy_imports(name: str) -> None:
    assert _heavy_imports([str(FIXTURES / "invalid" / name), "--require-certified"],
                          "introspection_cli.certification.state") == "[]"


@pytest.mark.parametrize("name", ["annotation-invalid", "annotation-orphan"])
def test_check_validates_annotations_without_heavy_imports(name: str) -> None:
    """The annotation rules read the file with the standard library: no numpy (the raters'
    agreement is `judges agree`'s)."""
    assert _heavy_imports([str(FIXTURES / "invalid" / name)],
                          "introspection_cli.annotations.file") == "[]"
