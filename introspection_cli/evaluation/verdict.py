"""The verdict tool's schema, and turning a model reply into a verdict or a reason why not.

Anything that is not exactly ``{"reasoning": <non-blank string>, "verdict": <one of
three>}`` becomes an :class:`InvalidReply` with the reason kept: a malformed
reply is an ``error`` outcome, never a pass or a fail.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import cast

from introspection_cli import strictjson
from introspection_cli.evaluation.outcomes import VERDICTS, Tokens, Verdict
from introspection_cli.evaluation.providers.interface import ModelReply
from introspection_cli.evaluation.verdict_tool import (
    VERDICT_TOOL_DESCRIPTION as VERDICT_TOOL_DESCRIPTION,
)
from introspection_cli.evaluation.verdict_tool import VERDICT_TOOL_NAME as VERDICT_TOOL_NAME
from introspection_cli.evaluation.verdict_tool import VERDICT_TOOL_SCHEMA as VERDICT_TOOL_SCHEMA

_EXCERPT = 120
#: The most reasoning kept per sample, in UTF-8 bytes, marker included: a reply may
#: carry megabytes of it, and every byte would go to the cache and the report.
REASONING_LIMIT = 16 * 1024


@dataclass(frozen=True, slots=True)
class ParsedVerdict:
    verdict: Verdict
    reasoning: str
    #: The tokens the reply that gave it used (kept in the verdict cache with it); None
    #: when not known (a cache entry from before they were kept). Two verdicts that say
    #: the same are equal whatever they cost.
    tokens: Tokens | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class InvalidReply:
    """Why a reply could not be used as a verdict (shown in the report's ``error``)."""

    reason: str


def reply_tokens(reply: ModelReply) -> Tokens:
    """The tokens ``reply`` used."""
    return Tokens(reply.input_tokens, reply.output_tokens, reply.cached_input_tokens,
                  reply.cache_write_tokens)


def parse_reply(reply: ModelReply) -> ParsedVerdict | InvalidReply:
    """Validate the forced tool call; without one, accept a valid JSON object in the text.
    A verdict carries the tokens the reply used."""
    parsed = _parse(reply)
    if isinstance(parsed, ParsedVerdict):
        return replace(parsed, tokens=reply_tokens(reply))
    return parsed


def _parse(reply: ModelReply) -> ParsedVerdict | InvalidReply:
    if reply.tool_arguments is not None:
        return _parse_tool_arguments(reply.tool_arguments, reply.stop_reason)
    if reply.other_tool is not None:
        # The tool was forced: a reply calling another one did not follow the request,
        # whatever its text says.
        return InvalidReply(f"the model called the tool {_excerpt(reply.other_tool)} "
                            f"instead of {VERDICT_TOOL_NAME}")
    if reply.refusal:
        return InvalidReply(f"the model refused: {_excerpt(reply.refusal)}")
    if reply.text:
        found = _verdict_in_text(reply.text)
        if found is not None:
            return found
        return InvalidReply(
            f"no {VERDICT_TOOL_NAME} call and no valid JSON verdict in the text reply: "
            f"{_excerpt(reply.text)}")
    stop = f" (stop reason: {reply.stop_reason})" if reply.stop_reason else ""
    return InvalidReply(f"the reply has no {VERDICT_TOOL_NAME} call and no text{stop}")


def validate_verdict(obj: object) -> ParsedVerdict | InvalidReply:
    """Check ``obj`` against :data:`VERDICT_TOOL_SCHEMA` (and a non-blank reasoning)."""
    if not isinstance(obj, dict):
        return InvalidReply(f"the verdict is a JSON {type(obj).__name__}, not an object")
    extra = sorted(set(obj) - {"reasoning", "verdict"})
    if extra:
        return InvalidReply(f"the verdict has unexpected keys: {', '.join(extra)}")
    reasoning = obj.get("reasoning")
    if not isinstance(reasoning, str) or not reasoning.strip():
        return InvalidReply("the verdict has no reasoning (a non-empty string is required)")
    verdict = obj.get("verdict")
    if verdict not in VERDICTS:
        return InvalidReply(
            f"the verdict {_excerpt(json.dumps(verdict))} is not one of {', '.join(VERDICTS)}")
    return ParsedVerdict(cast(Verdict, verdict), truncate_reasoning(reasoning))


def stored_verdict(verdict: object, reasoning: object,
                   tokens: Tokens | None = None) -> ParsedVerdict | InvalidReply:
    """:func:`validate_verdict` of a verdict read back from the cache, with the tokens
    stored beside it: the usual valid one is taken without building an object to check
    (a re-run reads thousands)."""
    if (type(verdict) is str and verdict in VERDICTS and type(reasoning) is str
            and len(reasoning) * 4 <= REASONING_LIMIT and not reasoning.isspace()
            and reasoning):
        return ParsedVerdict(verdict, reasoning, tokens)
    checked = validate_verdict({"verdict": verdict, "reasoning": reasoning})
    return replace(checked, tokens=tokens) if isinstance(checked, ParsedVerdict) else checked


def truncate_reasoning(reasoning: str) -> str:
    """``reasoning`` if it fits in :data:`REASONING_LIMIT` bytes, else its start and a
    marker saying it was truncated (the whole within the limit, so this is idempotent)."""
    if len(reasoning) * 4 <= REASONING_LIMIT:  # cannot be over: no encoding needed
        return reasoning
    data = reasoning.encode("utf-8", "surrogatepass")
    if len(data) <= REASONING_LIMIT:
        return reasoning
    marker = (f" … [reasoning truncated to {REASONING_LIMIT // 1024} KiB; the model wrote "
              f"{len(data):,} bytes]")
    room = REASONING_LIMIT - len(marker.encode("utf-8"))
    return data[:room].decode("utf-8", "ignore") + marker


def _parse_tool_arguments(arguments: object,
                          stop_reason: str | None) -> ParsedVerdict | InvalidReply:
    if isinstance(arguments, str):
        try:
            arguments = strictjson.loads(arguments)
        except (ValueError, RecursionError) as exc:
            cut = " (the reply was cut off at the token limit)" if stop_reason == "length" else ""
            return InvalidReply(
                f"the {VERDICT_TOOL_NAME} arguments are not valid JSON{cut}: {exc}; "
                f"got {_excerpt(cast(str, arguments))}")
    return validate_verdict(arguments)


def _verdict_in_text(text: str) -> ParsedVerdict | None:
    """The first JSON object in ``text`` that is a valid verdict, if any."""
    return strictjson.first_object(text, _valid_verdict)


def _valid_verdict(obj: object) -> ParsedVerdict | None:
    parsed = validate_verdict(obj)
    return parsed if isinstance(parsed, ParsedVerdict) else None


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= _EXCERPT else flat[:_EXCERPT] + "…")
