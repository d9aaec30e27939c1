"""A recipe whose judge's verdicts the stub decides from the rubric's words, and the stub.

The judge ``support`` passes a conversation marked ``TOPIC:word`` when its rubric
names ``word`` (tests/evaluation/stub_model_server.py: ``rubric_verdict``). Its
rows are labelled so that each keep rule can be made to fire alone:

======  =======================================================================
split   rows (topic x count, label)
======  =======================================================================
train   refund x2 pass, invoice x2 pass, spam x1 fail
dev     invoice x16 pass, billing x1 pass, account x1 pass, refund x4 pass,
        spam x1 fail, phish x1 fail
test    refund x2 pass, invoice x2 pass, spam x1 fail (text says HELD-OUT)
======  =======================================================================

The starting rubric names invoice, billing and account: on dev the four refund
rows are its disagreements (targeted), the other 20 rows agree (untargeted).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.evaluation.conftest import SENTINEL_KEY, fixture_row
from tests.evaluation.stub_model_server import RubricWordsScript, StubModelServer, StubReply

START_RUBRIC = ("Return pass when the agent resolves an invoice, billing or account request.\n"
                "Return fail otherwise, and not_applicable when there is no request.\n")
HELPFUL = START_RUBRIC.replace("invoice, billing or account", "invoice, billing, account or refund")
HARMFUL = START_RUBRIC.replace("invoice, billing or account", "billing or account")
COLLAPSE = HELPFUL.replace("Return fail otherwise,", "When in doubt, everything passes. Return "
                                                     "fail otherwise,")
FLIPS = START_RUBRIC.replace("invoice, billing or account", "invoice, refund or spam")

JUDGE_YAML = """\
# The support judge: graded by topic.
name: support
description: Did the agent resolve the request
llm:
  provider: {provider}
  model: stub-model
instructions: |
  Return pass when the agent resolves an invoice, billing or account request.
  Return fail otherwise, and not_applicable when there is no request.
"""

ROWS: Sequence[tuple[str, str, int, str]] = (
    ("train", "refund", 2, "pass"), ("train", "invoice", 2, "pass"), ("train", "spam", 1, "fail"),
    ("dev", "invoice", 16, "pass"), ("dev", "billing", 1, "pass"), ("dev", "account", 1, "pass"),
    ("dev", "refund", 4, "pass"), ("dev", "spam", 1, "fail"), ("dev", "phish", 1, "fail"),
    ("test", "refund", 2, "pass"), ("test", "invoice", 2, "pass"), ("test", "spam", 1, "fail"),
)


def row_text(split: str, topic: str, number: int) -> str:
    held_out = " HELD-OUT" if split == "test" else ""
    return (f"TOPIC:{topic}{held_out} The customer in conversation {split}-{topic}-{number} "
            f"writes about a {topic} matter and waits for an answer.")


def calibration_rows(rows: Sequence[tuple[str, str, int, str]] = ROWS) -> list[dict[str, Any]]:
    return [fixture_row(f"{split}-{topic}-{number}", row_text(split, topic, number),
                        expected=label, split=split)
            for split, topic, count, label in rows for number in range(count)]


def write_align_recipe(root: Path, *, provider: str = "openai",
                       rows: Sequence[tuple[str, str, int, str]] = ROWS,
                       judge_yaml: str = JUDGE_YAML) -> Path:
    (root / "judges").mkdir(parents=True)
    (root / "SYSTEM.md").write_text("You are a support agent.\n", encoding="utf-8")
    (root / "judges" / "support.yaml").write_text(judge_yaml.format(provider=provider),
                                                  encoding="utf-8")
    lines = [json.dumps(row) for row in calibration_rows(rows)]
    (root / "judges" / "support.calibration.jsonl").write_text("\n".join(lines) + "\n",
                                                               encoding="utf-8")
    return root


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN",
                 "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "NO_COLOR", "INTROSPECTION_PRICES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("INTROSPECTION_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("INTROSPECTION_CONFIG_DIR", str(tmp_path / "config"))


StubFactory = Callable[[Sequence[str | StubReply]], StubModelServer]


@pytest.fixture
def rubric_stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[StubFactory]:
    """Start a stub whose optimizer replies are the given edits, both SDKs pointed at it."""
    servers: list[StubModelServer] = []

    def start(edits: Sequence[str | StubReply]) -> StubModelServer:
        server = StubModelServer(api_key=SENTINEL_KEY, script=RubricWordsScript(edits))
        server.__enter__()
        servers.append(server)
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_url)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.anthropic_url)
        monkeypatch.setenv("OPENAI_API_KEY", SENTINEL_KEY)
        monkeypatch.setenv("ANTHROPIC_API_KEY", SENTINEL_KEY)
        return server

    yield start
    for server in servers:
        server.__exit__(None, None, None)
