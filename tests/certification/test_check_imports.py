"""Verifying a certificate in ``check`` imports no model SDK, Jinja2, Rich or HTTP client."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import FIXTURES, REPO


def test_check_verifies_a_certificate_without_heavy_imports() -> None:
    case = FIXTURES / "invalid" / "judge-not-certified-stale"
    code = ("import sys\n"
            "from introspection_cli.cli.app import main\n"
            "try:\n"
            f"    main(['check', {str(case)!r}, '--require-certified'])\n"
            "except SystemExit:\n"
            "    pass\n"
            "assert 'introspection_cli.certification.state' in sys.modules\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('openai', 'anthropic', 'jinja2', 'rich', 'httpx', 'httpx2', 'jsonschema')))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=False, cwd=REPO)
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stdout + result.stderr
