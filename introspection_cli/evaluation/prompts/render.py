"""Assemble the exact messages a judge model receives, from the templates beside this file.

Templates are rendered in a Jinja2 ``SandboxedEnvironment`` with ``StrictUndefined``.
The judge's instructions and the conversation are passed in as *data*: they
are never compiled as templates, so ``{{ 7*7 }}`` in a conversation reaches the
model literally. The transcript is fenced between the evaluated-material
markers, and marker text inside it is neutralised so the conversation can
never close the fence early or open a new one.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import FileSystemLoader, StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from introspection_cli.evaluation.gate import GateResult, as_match_text, canonical_json
from introspection_cli.evaluation.prompts.markers import (
    BEGIN_MARKER,
    END_MARKER,
    neutralise_markers,
)
from introspection_cli.evaluation.verdict import VERDICT_TOOL_NAME
from introspection_cli.recipe.model import Judge, Matcher


@dataclass(frozen=True, slots=True)
class RenderedPrompt:
    """The system prompt and the user message, exactly as sent."""

    system: str
    user: str


def render_prompt(judge: Judge, judge_input: Mapping[str, Any], gate: GateResult) -> RenderedPrompt:
    """The messages for ``judge`` on one conversation; ``gate`` says which events matched."""
    events = judge_input.get("events")
    transcript = render_transcript(events if isinstance(events, list) else [])
    common = {"tool_name": VERDICT_TOOL_NAME, "begin_marker": BEGIN_MARKER,
              "end_marker": END_MARKER}
    system = _system_prompt()
    user = _environment().get_template("user.j2").render(
        # The rubric is the author's, but a marker in it would still break the fence.
        instructions=neutralise_markers(judge.instructions.strip()),
        transcript=transcript,
        gate_matches=_describe_matches(judge.gate, gate),
        **common,
    )
    return RenderedPrompt(system=system, user=user)


@functools.cache
def _system_prompt() -> str:
    """The harness's system prompt: the same for every judge and row, so rendered once."""
    return _environment().get_template("system.j2").render(
        tool_name=VERDICT_TOOL_NAME, begin_marker=BEGIN_MARKER, end_marker=END_MARKER)


def render_transcript(events: Sequence[object]) -> str:
    """The conversation as numbered events, with fence markers inside it neutralised."""
    shown = [_event_view(number, event) for number, event in enumerate(events, start=1)]
    text = _environment().get_template("transcript.j2").render(events=shown)
    return neutralise_markers(text.strip("\n"))


def _event_view(number: int, event: object) -> dict[str, str | int]:
    """Every value a template may show, as text: strings as they are, the rest as JSON."""
    mapping: Mapping[str, Any] = event if isinstance(event, Mapping) else {}

    def text(key: str) -> str:
        value = mapping.get(key)
        return "" if value is None else as_match_text(value)

    view: dict[str, str | int] = {"number": number, "json": as_match_text(event)}
    for key in ("type", "role", "text", "name", "status", "rating", "comment"):
        view[key] = text(key)
    # A tool's input and output are always shown as canonical JSON, strings included,
    # so the model can tell the string "null" from a null output.
    for key in ("input", "output"):
        view[key] = canonical_json(mapping.get(key))
    return view


def _describe_matches(gate: Sequence[Matcher] | None,
                      result: GateResult) -> list[dict[str, object]]:
    if gate is None:
        return []
    return [
        {"event_number": match.event_index + 1, "event_type": match.event_type,
         "matcher": neutralise_markers(describe_matcher(gate[match.matcher_index]))}
        for match in result.matches
    ]


def describe_matcher(matcher: Matcher) -> str:
    """``message role=user text=/refund/i``: a matcher as its author wrote it."""
    parts = [f"event={matcher.event}"]
    parts += [f"{name}={value.raw}" for name, value in matcher.fields.items()]
    return " ".join(parts)


@functools.cache
def _environment() -> SandboxedEnvironment:
    return SandboxedEnvironment(
        loader=FileSystemLoader(Path(__file__).parent),
        autoescape=False,  # plain text for a model, not HTML
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        auto_reload=False,  # the templates ship in the package: no stat() per render
    )
