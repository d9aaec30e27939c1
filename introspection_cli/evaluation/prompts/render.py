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
    """The system prompt and the user message, exactly as sent.

    The first ``prefix_length`` characters of ``user`` (the instructions, up to the
    opening marker) are the same for every row of the judge: with the system
    prompt they are the prefix a provider can cache.
    """

    system: str
    user: str
    prefix_length: int = 0


class JudgePrompt:
    """Renders one judge's messages; what is the same for every row is prepared once."""

    def __init__(self, judge: Judge) -> None:
        self.system = _system_prompt()
        # The rubric is the author's, but a marker in it would still break the fence.
        self._instructions = neutralise_markers(judge.instructions.strip())
        self._gate = judge.gate
        # Described once: a matcher is shown the same way for every row it matches.
        self._matchers = [neutralise_markers(describe_matcher(m)) for m in judge.gate or ()]

    def render(self, judge_input: Mapping[str, Any], gate: GateResult) -> RenderedPrompt:
        """The messages for one conversation; ``gate`` says which events matched."""
        events = judge_input.get("events")
        user = _environment().get_template("user.j2").render(
            instructions=self._instructions,
            transcript=render_transcript(events if isinstance(events, list) else []),
            gate_matches=self._matches(gate), tool_name=VERDICT_TOOL_NAME,
            begin_marker=BEGIN_MARKER, end_marker=END_MARKER)
        # The prefix ends with the opening marker's line: the only marker before the
        # conversation, since the instructions were neutralised.
        opening = user.find(BEGIN_MARKER + "\n")
        prefix = opening + len(BEGIN_MARKER) + 1 if opening >= 0 else 0
        return RenderedPrompt(self.system, user, prefix)

    def _matches(self, result: GateResult) -> list[dict[str, object]]:
        if self._gate is None:
            return []
        return [{"event_number": match.event_index + 1, "event_type": match.event_type,
                 "matcher": self._matchers[match.matcher_index]}
                for match in result.matches]


def render_prompt(judge: Judge, judge_input: Mapping[str, Any], gate: GateResult) -> RenderedPrompt:
    """The messages for ``judge`` on one conversation (see :class:`JudgePrompt`, which a
    run builds once per judge)."""
    return JudgePrompt(judge).render(judge_input, gate)


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


#: The fields transcript.j2 shows for each event type; any other type shows its JSON.
_SHOWN: Mapping[str, tuple[str, ...]] = {
    "message": ("role", "text"),
    "tool": ("name", "status"),
    "feedback": ("rating", "comment"),
}


def _event_view(number: int, event: object) -> dict[str, str | int]:
    """What the template shows of one event, as text: strings as they are, the rest as
    JSON. Only the fields its type shows are converted."""
    mapping: Mapping[str, Any] = event if isinstance(event, Mapping) else {}
    kind = mapping.get("type")
    kind_text = "" if kind is None else as_match_text(kind)
    view: dict[str, str | int] = {"number": number, "type": kind_text}
    shown = _SHOWN.get(kind_text)
    if shown is None:
        view["json"] = as_match_text(event)
        return view
    for key in shown:
        value = mapping.get(key)
        view[key] = "" if value is None else as_match_text(value)
    if kind_text == "tool":
        # A tool's input and output are always shown as canonical JSON, strings included,
        # so the model can tell the string "null" from a null output.
        view["input"] = canonical_json(mapping.get("input"))
        view["output"] = canonical_json(mapping.get("output"))
    return view


def describe_matcher(matcher: Matcher) -> str:
    """``message role=user text=/refund/i``: a matcher as its author wrote it, its fields
    in name order (the judge's fingerprint does not see the order they are written in, so
    the request must not depend on it either)."""
    parts = [f"event={matcher.event}"]
    parts += [f"{name}={matcher.fields[name].raw}" for name in sorted(matcher.fields)]
    return " ".join(parts)


class _Environment(SandboxedEnvironment):
    """The sandbox, reading ``x.key`` of a plain dict as its item without first trying
    (and failing) an attribute: the templates read every value that way, and the
    failed attribute lookup cost as much as the rest of a render. Anything else goes
    through the sandbox's own checks."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute in obj:
            return obj[attribute]
        return super().getattr(obj, attribute)


@functools.cache
def _environment() -> SandboxedEnvironment:
    return _Environment(
        loader=FileSystemLoader(Path(__file__).parent),
        autoescape=False,  # plain text for a model, not HTML
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        auto_reload=False,  # the templates ship in the package: no stat() per render
    )
