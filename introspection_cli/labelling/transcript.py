"""A conversation as plain text, for the labelling sheet's transcript column.

The browser app renders transcripts itself (``webui/transcript.js``); this is
the same content for a spreadsheet cell: one numbered block per event.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

#: Spreadsheets hold at most 32,767 characters in a cell; longer transcripts are cut.
CELL_LIMIT = 32_000
_CUT = "\n... (transcript cut to fit a spreadsheet cell; see it in `introspection judges label`)"


def transcript_text(events: Sequence[Any], *, limit: int = CELL_LIMIT) -> str:
    """Every event in order, readable: messages by role, tool calls, feedback, others raw."""
    blocks = [f"[{index}] {_event_text(event)}" for index, event in enumerate(events, start=1)]
    text = "\n".join(blocks)
    if len(text) > limit:
        text = text[:limit - len(_CUT)] + _CUT
    return text


def _event_text(event: Any) -> str:
    if not isinstance(event, Mapping):
        return _json(event)
    kind = event.get("type")
    if kind == "message":
        return f"{_scalar(event.get('role'))}: {_scalar(event.get('text'))}"
    if kind == "tool":
        return (f"tool {_scalar(event.get('name'))} ({_scalar(event.get('status'))})\n"
                f"    input: {_json(event.get('input'))}\n"
                f"    output: {_json(event.get('output'))}")
    if kind == "feedback":
        return f"feedback {_scalar(event.get('rating'))}: {_scalar(event.get('comment'))}"
    return f"{_scalar(kind)} event: {_json(event)}"


def _scalar(value: object) -> str:
    return value if isinstance(value, str) else _json(value)


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)
