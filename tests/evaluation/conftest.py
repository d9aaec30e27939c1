"""Fixtures for the judge-runner tests: a recipe builder, the stub model server, a clean env."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from introspection_cli.recipe.model import Judge, LlmConfig, Matcher, Recipe, ValueMatcher
from tests.evaluation.stub_model_server import StubModelServer
from tests.fixture.rowmaker import fixture_envelope

#: A key that must never show up in any output, report, log or cache file.
SENTINEL_KEY = "sk-SENTINEL-7f3a9c-do-not-leak"

GATED_JUDGE = """\
name: billing
description: Handles billing requests
on:
  - event: message
    match:
      role: user
      text: /refund|invoice/i
llm:
  provider: {provider}
  model: stub-model
instructions: |
  Return pass when the agent handles the billing request, not_applicable otherwise.
"""

UNGATED_JUDGE = """\
name: helpful
description: Was the agent helpful
llm:
  provider: {provider}
  model: stub-model
instructions: |
  Return pass when the agent helped, fail when not, not_applicable when nothing to grade.
"""


def fixture_row(conversation_id: str, user_text: str, *, expected: str | None = "pass",
                split: str | None = None,
                extra_events: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """A valid judge_fixture row whose user message is ``user_text``."""
    judge_input = {
        "conversation_id": conversation_id,
        "events": [{"type": "message", "role": "user", "text": user_text},
                   {"type": "message", "role": "assistant", "text": "Let me look into that."},
                   *extra_events],
    }
    return fixture_envelope(judge_input, expected=expected, split=split,
                            runtime_url="https://runtime.example")


def write_recipe(root: Path, judges: dict[str, tuple[str, Sequence[dict[str, Any] | str]]],
                 *, provider: str = "openai") -> Path:
    """A recipe with ``judges``: name -> (judge YAML template, calibration rows or raw lines)."""
    (root / "judges").mkdir(parents=True)
    (root / "SYSTEM.md").write_text("You are a support agent.\n", encoding="utf-8")
    for name, (yaml_text, rows) in judges.items():
        (root / "judges" / f"{name}.yaml").write_text(yaml_text.format(provider=provider),
                                                      encoding="utf-8")
        if rows:
            lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
            (root / "judges" / f"{name}.calibration.jsonl").write_text(
                "\n".join(lines) + "\n", encoding="utf-8")
    return root


BILLING_GATE = (Matcher("message", {"role": ValueMatcher("user"),
                                    "text": ValueMatcher("/refund|invoice/i", "refund|invoice",
                                                         "i")}, line=4),)


def recipe_object(root: Path, *, provider: str = "openai",
                  gate: tuple[Matcher, ...] | None = BILLING_GATE) -> Recipe:
    """The :class:`Recipe` that :func:`write_recipe` describes, built without the loader.

    Runner tests use this so they depend only on the recipe *values*, not on YAML loading.
    """
    judges = {}
    for path in sorted((root / "judges").glob("*.yaml")):
        name = path.stem
        judges[name] = Judge(name, "test judge", LlmConfig(provider, "stub-model"),  # type: ignore[arg-type]
                             "Return pass when the agent handled it.", path,
                             gate if name == "billing" else None)
    return Recipe(root=root, judges=judges)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No real keys or endpoints leak in; every test gets its own cache dir."""
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN",
                 "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("INTROSPECTION_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[StubModelServer]:
    """A stub speaking both APIs, with both SDKs pointed at it and the sentinel key set."""
    with StubModelServer(api_key=SENTINEL_KEY, hang_seconds=2.0) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_url)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.anthropic_url)
        monkeypatch.setenv("OPENAI_API_KEY", SENTINEL_KEY)
        monkeypatch.setenv("ANTHROPIC_API_KEY", SENTINEL_KEY)
        yield server
