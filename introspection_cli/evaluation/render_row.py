"""``judges render``: the exact request one calibration row would produce, without sending it
(printed by :mod:`introspection_cli.reporting.render_prompt`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from introspection_cli.errors import DataError, UsageError
from introspection_cli.evaluation.gate import DEFAULT_REGEX_TIMEOUT, GateTimeout, evaluate_gate
from introspection_cli.evaluation.plan import build_request
from introspection_cli.evaluation.providers.interface import ModelRequest
from introspection_cli.fixture.codes import BLANK_LINE, UNLABELLED


@dataclass(frozen=True)
class RowPrompt:
    """The request for one row, or why there would be none (``note``)."""

    judge: str
    line: int
    request: ModelRequest | None
    note: str | None = None

    def as_json(self) -> dict[str, object]:
        """``--format json``'s document: ``{judge, line, note, messages, tool}``, the last two
        None when no call would be made."""
        request = self.request
        return {"judge": self.judge, "line": self.line, "note": self.note,
                "messages": None if request is None else [
                    {"role": "system", "content": request.system},
                    {"role": "user", "content": request.user}],
                "tool": None if request is None else tool_json(request)}


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


def tool_json(request: ModelRequest) -> dict[str, object]:
    """The forced tool of ``request`` as JSON: its name, description and parameters."""
    return {"name": request.tool_name, "description": request.tool_description,
            "parameters": dict(request.tool_schema)}
