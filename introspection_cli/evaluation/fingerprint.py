"""The judge fingerprint: one name for everything that decides a judge's request.

``fingerprint = "sha256:" + SHA-256 of the RFC 8785 form of {"harness": H,
"instructions", "on", "provider", "model", "temperature", "max_output_tokens"}``
(absent values null), where H, the *harness*, is the SHA-256 of the shipped
prompt templates (their file bytes), the fence markers and the verdict tool
(name, description, schema). Only the conversation is left out, so any
change a verdict could depend on changes the fingerprint.

The report, the exposure file, the evaluation ledger, ``judges certify``,
``judges status`` and ``check``'s certificate rule all name a judge version by
this one function.
It reads the templates as bytes and never renders them, so ``check`` and
``status`` compute it without importing Jinja2 or a model SDK.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from introspection_cli.evaluation.prompts.fence import BEGIN_MARKER, END_MARKER
from introspection_cli.evaluation.verdict_tool import (
    VERDICT_TOOL_DESCRIPTION,
    VERDICT_TOOL_NAME,
    VERDICT_TOOL_SCHEMA,
)
from introspection_cli.fixture.canonical import canonical_json
from introspection_cli.recipe.model import Judge, Matcher

TEMPLATES_DIR = Path(__file__).resolve().parent / "prompts"

#: What each component of a fingerprint is called when it changes (``certificate-stale``).
COMPONENT_NAMES: Mapping[str, str] = {
    "instructions": "instructions",
    "gate": "gate",
    "llm": "model or parameters",
    "harness": "harness",
}


def _sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@functools.cache
def harness_digest() -> str:
    """H: the SHA-256 of the prompt templates' bytes, the fence markers and the verdict tool."""
    templates = {path.name: _sha256(path.read_bytes())
                 for path in sorted(TEMPLATES_DIR.glob("*.j2"))}
    material = {
        "templates": templates,
        "markers": [BEGIN_MARKER, END_MARKER],
        "tool": {"name": VERDICT_TOOL_NAME, "description": VERDICT_TOOL_DESCRIPTION,
                 "schema": dict(VERDICT_TOOL_SCHEMA)},
    }
    return _sha256(canonical_json(material))


def gate_as_loaded(gate: tuple[Matcher, ...] | None) -> list[dict[str, Any]] | None:
    """The ``on`` list with every value exactly as written (``/refund/i`` stays a string)."""
    if gate is None:
        return None
    return [{"event": matcher.event,
             "match": {name: value.raw for name, value in matcher.fields.items()}}
            for matcher in gate]


@dataclass(frozen=True, slots=True)
class JudgeIdentity:
    """A judge version: its fingerprint and the digest of each part it is made of.

    The parts let a stale certificate say *what* changed; the fingerprint alone
    only says that something did.
    """

    fingerprint: str
    components: Mapping[str, str]

    def changed_since(self, components: Mapping[str, str]) -> list[str]:
        """Names (:data:`COMPONENT_NAMES`) of the parts that differ from ``components``."""
        return [label for key, label in COMPONENT_NAMES.items()
                if components.get(key) != self.components[key]]


def judge_identity(judge: Judge, *, provider: str | None = None,
                   model: str | None = None) -> JudgeIdentity:
    """The fingerprint of ``judge`` as it would run (``provider``/``model`` override its llm)."""
    llm = {
        "provider": provider or judge.llm.provider,
        "model": model or judge.llm.model,
        "temperature": judge.llm.temperature,
        "max_output_tokens": judge.llm.max_output_tokens,
    }
    on = gate_as_loaded(judge.gate)
    harness = harness_digest()
    material = {"harness": harness, "instructions": judge.instructions, "on": on, **llm}
    return JudgeIdentity(
        fingerprint=_sha256(canonical_json(material)),
        components={
            "instructions": _sha256(canonical_json(judge.instructions)),
            "gate": _sha256(canonical_json(on)),
            "llm": _sha256(canonical_json(llm)),
            "harness": harness,
        },
    )


def judge_fingerprint(judge: Judge, *, provider: str | None = None,
                      model: str | None = None) -> str:
    """``sha256:<hex>`` naming ``judge``'s version (see the module docstring)."""
    return judge_identity(judge, provider=provider, model=model).fingerprint
