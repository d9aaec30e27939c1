"""``judges render``: the exact request one calibration row would produce, without sending it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from introspection_cli.errors import DataError, UsageError
from introspection_cli.evaluation.gate import DEFAULT_REGEX_TIMEOUT, GateTimeout, evaluate_gate
from introspection_cli.evaluation.plan import build_request
from introspection_cli.evaluation.providers.interface import ModelRequest
from introspection_cli.fixture.codes import BLANK_LINE, UNLABELLED
from introspection_cli.formats import TEXT_OR_JSON, Format, parse_format


@dataclass(frozen=True)
class RowPrompt:
    """The request for one row, or why there would be none (``note``)."""

    judge: str
    line: int
    request: ModelRequest | None
    note: str | None = None


def prompt_for_line(recipe_path: Path, judge_name: str, line: int) -> RowPrompt:
    """Build the request ``judge_name`` would send for calibration row ``line``."""
    from introspection_cli.evaluation.plan import load_valid_recipe
    from introspection_cli.fixture import verify_calibration_file

    recipe, _ = load_valid_recipe(recipe_path, [judge_name])
    judge = recipe.judges.get(judge_name)
    if judge is None:
        raise UsageError(f"no judge named {judge_name} in {recipe_path} "
                         f"(judges: {', '.join(sorted(recipe.judges)) or 'none'})")
    if not judge.calibration_path.is_file():
        raise DataError(f"judge {judge_name} has no calibration file {judge.calibration_path}")
    for result in verify_calibration_file(judge.calibration_path):
        if not result.line <= line <= result.end_line:  # a spread row covers several lines
            continue
        # An unlabelled row can still be rendered: the label is not part of the prompt.
        blocking = [r for r in result.rejections if r.code not in (UNLABELLED, BLANK_LINE)]
        if blocking or result.row is None:
            reasons = "; ".join(f"{r.code}: {r.message}" for r in blocking) or "not a row"
            raise DataError(f"{judge.calibration_path}:{result.line}: the row is rejected "
                            f"({reasons})")
        events = result.row.judge_input.get("events")
        try:
            gate = evaluate_gate(judge.gate, events if isinstance(events, list) else [],
                                 timeout=DEFAULT_REGEX_TIMEOUT)
        except GateTimeout as exc:
            return RowPrompt(judge_name, line, None, f"error: {exc}; no call would be made")
        if not gate.applies:
            return RowPrompt(judge_name, line, None,
                             "the judge's gate matches no event in this conversation: "
                             "the row is `gated` and no call would be made")
        return RowPrompt(judge_name, line,
                         build_request(judge, judge.llm.provider, judge.llm.model,
                                       result.row.judge_input, gate))
    raise UsageError(f"{judge.calibration_path} has no line {line}")


def format_row_prompt(prompt: RowPrompt, fmt: str) -> str:
    """``text``: the messages under headings; ``json``: ``{system, user, tool}``."""
    request = prompt.request
    if parse_format(fmt, TEXT_OR_JSON) is Format.JSON:
        body: dict[str, object] = {"judge": prompt.judge, "line": prompt.line,
                                   "note": prompt.note, "messages": None, "tool": None}
        if request is not None:
            body["messages"] = [{"role": "system", "content": request.system},
                                {"role": "user", "content": request.user}]
            body["tool"] = _tool(request)
        return json.dumps(body, indent=2, ensure_ascii=False) + "\n"
    if request is None:
        return f"{prompt.note}\n"
    return (f"===== system =====\n{request.system}\n\n"
            f"===== user =====\n{request.user}\n\n"
            f"===== tool (forced) =====\n"
            f"{json.dumps(_tool(request), indent=2, ensure_ascii=False)}\n")


def _tool(request: ModelRequest) -> dict[str, object]:
    return {"name": request.tool_name, "description": request.tool_description,
            "parameters": dict(request.tool_schema)}
