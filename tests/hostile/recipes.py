"""Small builders for hostile recipe trees: a valid base recipe, judges, skills, calibration rows."""

from __future__ import annotations

import json
import os
import socket
import tempfile
from pathlib import Path

from tests.fixture.rowmaker import line, make_row

RECIPE = "r"

JUDGE = """name: {name}
description: "Is the answer useful?"
llm:
  provider: openai
  model: gpt-5.6-luna
instructions: |
  Return pass when the answer helps, fail when it does not, and
  not_applicable when there is no answer.
"""

SKILL = "---\nname: {name}\ndescription: Look up an invoice.\n---\n# Body\n"


def base_recipe(tmp: Path) -> Path:
    """A clean recipe at ``tmp/r``: SYSTEM.md, one judge, one skill, one agent."""
    root = tmp / RECIPE
    for sub in ("judges", "skills/lookup", "agents"):
        (root / sub).mkdir(parents=True)
    (root / "SYSTEM.md").write_text("You are a support assistant.\n")
    write_judge(root, "good")
    (root / "skills" / "lookup" / "SKILL.md").write_text(SKILL.format(name="lookup"))
    (root / "agents" / "support.yaml").write_text("name: support\nskills:\n  - lookup\n")
    return root


def write_judge(root: Path, name: str, text: str | None = None) -> Path:
    path = root / "judges" / f"{name}.yaml"
    path.write_text(JUDGE.format(name=name) if text is None else text)
    return path


def calibration_lines(lines: list[bytes]) -> bytes:
    return b"".join(item + b"\n" for item in lines)


def valid_row_line(conversation_id: str = "conv_1", text: str = "Hi") -> bytes:
    judge_input = {"conversation_id": conversation_id,
                   "events": [{"type": "message", "role": "user", "text": text}]}
    return line(make_row(conversation_id, judge_input))


def write_calibration(root: Path, data: bytes, judge: str = "good") -> Path:
    path = root / "judges" / f"{judge}.calibration.jsonl"
    path.write_bytes(data)
    return path


def outside_dir(tmp: Path) -> Path:
    """A directory beside the recipe (inside the test's tmp dir, so it is fingerprinted too)."""
    path = tmp / "outside"
    path.mkdir(exist_ok=True)
    return path


def make_fifo(path: Path) -> None:
    os.mkfifo(path)


def make_socket(path: Path) -> None:
    """A Unix socket at ``path``; bound at a short path first (socket paths are capped at 108 bytes)."""
    with tempfile.TemporaryDirectory(dir="/tmp") as short, socket.socket(socket.AF_UNIX) as sock:
        sock.bind(os.path.join(short, "s"))
        os.rename(os.path.join(short, "s"), path)


def json_line(value: object) -> bytes:
    return json.dumps(value).encode()
