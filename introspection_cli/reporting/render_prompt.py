"""``judges render``'s text: the messages one calibration row would send, under headings, and
the forced tool's schema; or why no call would be made (its JSON is the row's document)."""

from __future__ import annotations

import json

from introspection_cli.evaluation.render_row import RowPrompt, tool_json


def prompt_text(prompt: RowPrompt) -> str:
    """The system and user messages and the tool, each under a heading; else the note."""
    request = prompt.request
    if request is None:
        return f"{prompt.note}\n"
    return (f"===== system =====\n{request.system}\n\n"
            f"===== user =====\n{request.user}\n\n"
            f"===== tool (forced) =====\n"
            f"{json.dumps(tool_json(request), indent=2, ensure_ascii=False)}\n")
