"""Reporters for ``introspection check``: text, json and github, picked by name."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from introspection_cli.diagnostics import Severity
from introspection_cli.recipe.checker import RecipeResult

_COLORS = {Severity.ERROR: "\033[31m", Severity.WARNING: "\033[33m"}
_RESET, _BOLD = "\033[0m", "\033[1m"


def _counts(results: Sequence[RecipeResult]) -> tuple[int, int]:
    diagnostics = [d for r in results for d in r.diagnostics]
    errors = sum(d.severity is Severity.ERROR for d in diagnostics)
    return errors, len(diagnostics) - errors


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


#: How many recipe names the text summary lists: a pre-commit run over a whole
#: repository may check hundreds, and the summary stays one readable line.
SUMMARY_NAMES = 5


def _names(results: Sequence[RecipeResult]) -> str:
    names = [r.display for r in results[:SUMMARY_NAMES]]
    if len(results) > SUMMARY_NAMES:
        names.append(f"and {len(results) - SUMMARY_NAMES} more")
    return ", ".join(names)


def render_text(results: Sequence[RecipeResult], *, color: bool = False) -> str:
    """``path:line:col: severity[code] message (hint)`` lines, then a one-line summary."""
    lines = []
    for result in results:
        for d in result.diagnostics:
            severity = f"{_COLORS[d.severity]}{d.severity.value}{_RESET}" if color else None
            lines.append(d.format_line(severity=severity))
    errors, warnings = _counts(results)
    checked = f"Checked {_plural(len(results), 'recipe')} ({_names(results)})"
    summary = (f"{checked}: {_plural(errors, 'error')}, {_plural(warnings, 'warning')}"
               if errors or warnings else f"{checked}: no problems found")
    lines.append(f"{_BOLD}{summary}{_RESET}" if color else summary)
    return "\n".join(lines) + "\n"


def render_json(results: Sequence[RecipeResult], *, color: bool = False) -> str:
    """The SPEC §3.1 JSON object (plus a ``hint`` per diagnostic)."""
    errors, warnings = _counts(results)
    payload = {
        "diagnostics": [d.as_json() for r in results for d in r.diagnostics],
        "recipes": [r.display for r in results],
        "summary": {"errors": errors, "warnings": warnings},
    }
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(results: Sequence[RecipeResult], *, color: bool = False) -> str:
    """GitHub Actions workflow commands: ``::error file=...,line=...,col=...,title=code::msg``."""
    lines = []
    for result in results:
        for d in result.diagnostics:
            props = [f"file={_escape_property(d.path)}"]
            if d.line is not None:
                props.append(f"line={d.line}")
            if d.column is not None:
                props.append(f"col={d.column}")
            props.append(f"title={_escape_property(d.code)}")
            message = d.message + (f" ({d.hint})" if d.hint else "")
            lines.append(f"::{d.severity.value} {','.join(props)}::{_escape_data(message)}")
    errors, warnings = _counts(results)
    lines.append(f"{_plural(errors, 'error')}, {_plural(warnings, 'warning')} "
                 f"in {_plural(len(results), 'recipe')}")
    return "\n".join(lines) + "\n"


def _encodable(render: Callable[..., str]) -> Callable[..., str]:
    """``render`` with lone surrogates written as ``\\udXXX`` escapes.

    Messages quote the user's data, and a calibration row may hold a lone
    surrogate (``"\\ud800"`` is valid JSON), which no stream can encode: the
    report must still print (in JSON the escape reads back as the same value).
    """
    def wrapped(results: Sequence[RecipeResult], *, color: bool = False) -> str:
        return render(results, color=color).encode("utf-8", "backslashreplace").decode("utf-8")
    return wrapped


REPORTERS: dict[str, Callable[..., str]] = {
    "text": _encodable(render_text),
    "json": _encodable(render_json),
    "github": _encodable(render_github),
}
