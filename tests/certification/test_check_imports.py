"""Verifying a certificate in ``check`` imports no model SDK, Jinja2, Rich or HTTP client."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import FIXTURES, REPO


# A version 1 certificate; a version 2 one, whose run is found in its exposure file.
@pytest.mark.parametrize("name", ["judge-not-certified-stale", "certificate-stale"])
def test_check_verifies_a_certificate_without_heavy_imports(name: str) -> None:
    case = FIXTURES / "invalid" / name
    code = ("import sys\n"
            "from introspection_cli.cli.app import main\n"
            "try:\n"
            f"    main(['check', {str(case)!r}, '--require-certified'])\n"
            "except SystemExit:\n"
            "    pass\n"
            "assert 'introspection_cli.certification.state' in sys.modules\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('openai', 'anthropic', 'jinja2', 'rich', 'httpx', 'httpx2', 'jsonschema', 'numpy', "
            "'sqlite3')))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=False, cwd=REPO)
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stdout + result.stderr


@pytest.mark.parametrize("name", ["annotation-invalid", "annotation-orphan"])
def test_check_validates_annotations_without_heavy_imports(name: str) -> None:
    """The annotation rules read the file with the standard library: no numpy (the raters'
    agreement is `judges agree`'s), no jsonschema."""
    case = FIXTURES / "invalid" / name
    code = ("import sys\n"
            "from introspection_cli.cli.app import main\n"
            "try:\n"
            f"    main(['check', {str(case)!r}])\n"
            "except SystemExit:\n"
            "    pass\n"
            "assert 'introspection_cli.annotations.file' in sys.modules\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('openai', 'anthropic', 'jinja2', 'rich', 'httpx', 'httpx2', 'jsonschema', 'numpy', "
            "'sqlite3')))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=False, cwd=REPO)
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stdout + result.stderr
