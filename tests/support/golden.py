"""Golden command outputs: what a command said, compared with (or, with
``UPDATE_GOLDEN=1``, recorded as) a file beside the test."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path


def said(result: subprocess.CompletedProcess[str]) -> str:
    """A command's exit code, stdout and stderr as one text."""
    return (f"exit {result.returncode}\n--- stdout\n{result.stdout}--- stderr\n"
            f"{result.stderr}")


def normalised(text: str, root: Path) -> str:
    """``text`` with the recipe's path as ``<recipe>`` and every timestamp as ``<time>``."""
    text = text.replace(json.dumps(str(root))[1:-1], "<recipe>").replace(str(root), "<recipe>")
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?", "<time>", text)


def check_golden(path: Path, text: str) -> None:
    """``text`` is the golden file at ``path`` (recorded there with ``UPDATE_GOLDEN=1``)."""
    if os.environ.get("UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"the output differs from {path}"
