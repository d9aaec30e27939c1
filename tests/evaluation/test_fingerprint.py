"""The judge fingerprint: its definition, what changes it, and that it needs no Jinja2 or SDK."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import rfc8785

from introspection_cli.evaluation import fingerprint as fp
from introspection_cli.evaluation.verdict import (
    VERDICT_TOOL_DESCRIPTION,
    VERDICT_TOOL_NAME,
    VERDICT_TOOL_SCHEMA,
)
from introspection_cli.recipe.model import Judge, LlmConfig, Matcher, ValueMatcher

REPO = Path(__file__).resolve().parents[2]

JUDGE = Judge(
    name="billing", description="Billing", path=Path("judges/billing.yaml"),
    llm=LlmConfig("openai", "gpt-x", temperature=0.0, max_output_tokens=300),
    instructions="Return pass when the refund is handled.\n",
    gate=(Matcher("message", {"role": ValueMatcher("user"),
                              "text": ValueMatcher("/refund/i", "refund", "i")}),),
)


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def test_fingerprint_is_the_documented_hash_computed_with_the_reference_canonicaliser() -> None:
    templates = {path.name: _sha(path.read_bytes())
                 for path in sorted((REPO / "introspection_cli/evaluation/prompts").glob("*.j2"))}
    assert set(templates) == {"system.j2", "user.j2", "transcript.j2"}
    harness = _sha(rfc8785.dumps({
        "templates": templates,
        "markers": ["[BEGIN EVALUATED MATERIAL: conversation]", "[END EVALUATED MATERIAL]"],
        "tool": {"name": VERDICT_TOOL_NAME, "description": VERDICT_TOOL_DESCRIPTION,
                 "schema": dict(VERDICT_TOOL_SCHEMA)}}))
    expected = _sha(rfc8785.dumps({
        "harness": harness, "instructions": "Return pass when the refund is handled.\n",
        "on": [{"event": "message", "match": {"role": "user", "text": "/refund/i"}}],
        "provider": "openai", "model": "gpt-x", "temperature": 0.0, "max_output_tokens": 300}))
    assert fp.harness_digest() == harness
    assert fp.judge_fingerprint(JUDGE) == expected


@pytest.mark.parametrize(("changed", "component"), [
    (replace(JUDGE, instructions="Return pass when the refund is handled well.\n"),
     "instructions"),
    (replace(JUDGE, gate=None), "gate"),
    (replace(JUDGE, gate=(Matcher("message", {"text": ValueMatcher("/refund/")}),)), "gate"),
    (replace(JUDGE, llm=LlmConfig("openai", "gpt-y", 0.0, 300)), "model or parameters"),
    (replace(JUDGE, llm=LlmConfig("anthropic", "gpt-x", 0.0, 300)), "model or parameters"),
    (replace(JUDGE, llm=LlmConfig("openai", "gpt-x", 0.5, 300)), "model or parameters"),
    (replace(JUDGE, llm=LlmConfig("openai", "gpt-x", 0.0, None)), "model or parameters"),
])
def test_each_part_changes_the_fingerprint_and_is_named(changed: Judge, component: str) -> None:
    before = fp.judge_identity(JUDGE)
    after = fp.judge_identity(changed)
    assert after.fingerprint != before.fingerprint
    assert after.changed_since(before.components) == [component]


def test_the_description_and_path_are_not_part_of_it() -> None:
    moved = replace(JUDGE, description="Another description", path=Path("elsewhere.yaml"))
    assert fp.judge_fingerprint(moved) == fp.judge_fingerprint(JUDGE)


def test_an_override_is_the_fingerprint_of_what_runs() -> None:
    assert (fp.judge_fingerprint(JUDGE, model="gpt-y")
            == fp.judge_fingerprint(replace(JUDGE, llm=LlmConfig("openai", "gpt-y", 0.0, 300))))


def test_a_template_byte_changes_the_harness(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / "prompts"
    shutil.copytree(fp.TEMPLATES_DIR, copy)
    before = fp.judge_identity(JUDGE)
    monkeypatch.setattr(fp, "TEMPLATES_DIR", copy)
    fp.harness_digest.cache_clear()
    try:
        assert fp.judge_fingerprint(JUDGE) == before.fingerprint  # same bytes, same H
        fp.harness_digest.cache_clear()
        (copy / "system.j2").write_bytes((copy / "system.j2").read_bytes() + b" ")
        after = fp.judge_identity(JUDGE)
        assert after.changed_since(before.components) == ["harness"]
    finally:
        fp.harness_digest.cache_clear()


def test_computing_a_fingerprint_imports_no_jinja_sdk_or_rich() -> None:
    code = ("import sys\n"
            "from pathlib import Path\n"
            "from introspection_cli.evaluation.fingerprint import judge_fingerprint\n"
            "from introspection_cli.recipe.model import Judge, LlmConfig\n"
            "judge = Judge('j', 'd', LlmConfig('openai', 'm'), 'i', Path('j.yaml'))\n"
            "assert judge_fingerprint(judge).startswith('sha256:')\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('openai', 'anthropic', 'jinja2', 'rich', 'httpx', 'httpx2')))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=False, cwd=REPO)
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stdout + result.stderr


def test_the_verdict_tool_offers_the_verdicts_in_the_outcome_types_order() -> None:
    """The tool's enum is part of every fingerprint: one tuple of verdicts, one order."""
    from introspection_cli.evaluation.outcomes import VERDICTS
    from introspection_cli.evaluation.verdict_tool import VERDICT_TOOL_SCHEMA

    assert VERDICT_TOOL_SCHEMA["properties"]["verdict"]["enum"] == list(VERDICTS)
