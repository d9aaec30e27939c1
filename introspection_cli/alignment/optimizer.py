"""Asking the optimizer model for one edit of a rubric, and reading its answer.

The request is a :class:`~introspection_cli.evaluation.providers.ModelRequest`
like a judge's, sent through the same provider layer (the official SDKs, with
their bounds on bytes and time), with its own forced tool
:data:`PROPOSE_TOOL_NAME`: ``{"rationale": string, "instructions": string}``,
the rationale first, the instructions being the complete new rubric. The
prompt (``prompts/system.j2`` and ``prompts/user.j2`` beside this file, rendered
in a Jinja2 sandbox) states the current rubric, each train disagreement shown
(its conversation fenced like a judge's, its label, the judge's verdict and
reasoning) and the edits already refused in this run, and asks to change one
thing. Conversation text is data: it is never rendered as a template, and
fence markers inside it are neutralised.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from introspection_cli import strictjson
from introspection_cli.evaluation.prompts.markers import (
    BEGIN_MARKER,
    END_MARKER,
    neutralise_markers,
)
from introspection_cli.evaluation.prompts.render import render_transcript
from introspection_cli.evaluation.providers import ModelReply, ModelRequest

PROPOSE_TOOL_NAME = "propose_edit"
PROPOSE_TOOL_DESCRIPTION = ("Submit one targeted edit of the rubric: first your rationale, "
                            "then the complete new rubric. Call this exactly once.")
PROPOSE_TOOL_SCHEMA: Mapping[str, Any] = MappingProxyType({
    "type": "object",
    "properties": {
        "rationale": {"type": "string",
                      "description": "What the disagreements have in common, and the one "
                                     "thing you changed to fix it."},
        "instructions": {"type": "string",
                         "description": "The complete new rubric, with that one change "
                                        "made and everything else kept."},
    },
    "required": ["rationale", "instructions"],
    "additionalProperties": False,
})
#: Train disagreements shown to the optimizer at most (the first ones, in file order).
MAX_SHOWN = 20
#: Characters of a conversation's transcript, and of the judge's reasoning, shown at most.
TRANSCRIPT_LIMIT = 12_000
REASONING_LIMIT = 2_000
#: Output tokens the optimizer may use: room for a rubric and its rationale.
MAX_OUTPUT_TOKENS = 4_096
_EXCERPT = 200


@dataclass(frozen=True, slots=True)
class Disagreement:
    """A train row whose outcome disagrees with its label, as the optimizer is shown it."""

    line: int
    conversation_id: str
    expected: str
    outcome: str
    reasoning: str | None
    events: Sequence[object]


@dataclass(frozen=True, slots=True)
class TriedEdit:
    """A candidate of this run that was not kept, and why (one line)."""

    rationale: str
    reasons: str


@dataclass(frozen=True, slots=True)
class Proposal:
    rationale: str
    instructions: str


@dataclass(frozen=True, slots=True)
class InvalidProposal:
    """Why the optimizer's reply is not an edit."""

    reason: str


def proposal_request(instructions: str, disagreements: Sequence[Disagreement],
                     tried: Sequence[TriedEdit], *, model: str) -> ModelRequest:
    """The request asking ``model`` for one edit of ``instructions``."""
    shown = disagreements[:MAX_SHOWN]
    rows = [{"expected": row.expected, "outcome": row.outcome,
             "reasoning": neutralise_markers(_cut(row.reasoning or "(none given)",
                                                  REASONING_LIMIT)),
             "transcript": _cut(render_transcript(row.events), TRANSCRIPT_LIMIT)}
            for row in shown]
    common = {"tool_name": PROPOSE_TOOL_NAME, "begin_marker": BEGIN_MARKER,
              "end_marker": END_MARKER}
    system = _environment().get_template("system.j2").render(**common)
    user = _environment().get_template("user.j2").render(
        instructions=neutralise_markers(instructions.strip()), rows=rows, shown=len(shown),
        total=len(disagreements),
        tried=[{"rationale": neutralise_markers(_cut(" ".join(edit.rationale.split()),
                                                     _EXCERPT)),
                "reasons": edit.reasons} for edit in tried],
        **common)
    return ModelRequest(model=model, system=system, user=user, tool_name=PROPOSE_TOOL_NAME,
                        tool_description=PROPOSE_TOOL_DESCRIPTION,
                        tool_schema=PROPOSE_TOOL_SCHEMA, max_output_tokens=MAX_OUTPUT_TOKENS)


def _cut(text: str, limit: int) -> str:
    """``text``, or its first ``limit`` characters and a note saying how much was left out."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[… {len(text) - limit:,} more characters not shown]"


def parse_proposal(reply: ModelReply) -> Proposal | InvalidProposal:
    """The forced tool's arguments as a :class:`Proposal`; without a tool call, a JSON
    object in the text is accepted when it validates."""
    if reply.tool_arguments is not None:
        arguments = reply.tool_arguments
        if isinstance(arguments, str):
            try:
                arguments = strictjson.loads(arguments)
            except (ValueError, RecursionError) as exc:
                cut = " (cut off at the token limit)" if reply.stop_reason in (
                    "length", "max_tokens") else ""
                return InvalidProposal(f"the {PROPOSE_TOOL_NAME} arguments are not valid "
                                       f"JSON{cut}: {exc}")
        return validate_proposal(arguments)
    if reply.other_tool is not None:
        return InvalidProposal(f"the model called {_excerpt(reply.other_tool)} instead of "
                               f"{PROPOSE_TOOL_NAME}")
    if reply.refusal:
        return InvalidProposal(f"the model refused: {_excerpt(reply.refusal)}")
    if reply.text:
        found = _proposal_in_text(reply.text)
        return found or InvalidProposal(f"no {PROPOSE_TOOL_NAME} call and no valid JSON "
                                        f"edit in the text reply: {_excerpt(reply.text)}")
    return InvalidProposal(f"the reply has no {PROPOSE_TOOL_NAME} call and no text")


def validate_proposal(obj: object) -> Proposal | InvalidProposal:
    """Check ``obj`` against :data:`PROPOSE_TOOL_SCHEMA`."""
    if not isinstance(obj, dict):
        return InvalidProposal(f"the edit is a JSON {type(obj).__name__}, not an object")
    extra = sorted(set(obj) - {"rationale", "instructions"})
    if extra:
        return InvalidProposal(f"the edit has unexpected keys: {', '.join(extra)}")
    rationale, instructions = obj.get("rationale"), obj.get("instructions")
    if not isinstance(rationale, str) or not isinstance(instructions, str):
        return InvalidProposal("the edit needs a rationale and instructions, both strings")
    return Proposal(rationale.strip(), instructions)


def _proposal_in_text(text: str) -> Proposal | None:
    return strictjson.first_object(text, _valid_proposal)


def _valid_proposal(obj: object) -> Proposal | None:
    found = validate_proposal(obj)
    return found if isinstance(found, Proposal) else None


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return json.dumps(flat if len(flat) <= _EXCERPT else flat[:_EXCERPT] + "…")


@functools.cache
def _environment() -> Any:
    from jinja2 import FileSystemLoader, StrictUndefined
    from jinja2.sandbox import SandboxedEnvironment

    return SandboxedEnvironment(
        loader=FileSystemLoader(Path(__file__).parent / "prompts"), autoescape=False,
        undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
        keep_trailing_newline=False, auto_reload=False)
