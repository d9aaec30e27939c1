"""``introspection check``'s renderers: text, json and github (sarif in
:mod:`.render_check_sarif`), picked by :mod:`.registry`.

Text and GitHub output are read by people: one slip repeated on every row of a
calibration file must not bury the rest, so they show at most
:data:`REPEATS_SHOWN` diagnostics of one code per file and then one
``… and N more (code)`` line. JSON and SARIF are read by
programs and keep every diagnostic.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import groupby

from introspection_cli.diagnostics import Diagnostic, Severity
from introspection_cli.recipe.checker import Checked, RecipeResult

_COLORS = {Severity.ERROR: "\033[31m", Severity.WARNING: "\033[33m"}
_RESET, _BOLD = "\033[0m", "\033[1m"

#: How many diagnostics of one code in one file text and GitHub output show.
REPEATS_SHOWN = 3
#: How many recipe names the text summary lists: a pre-commit run over a whole
#: repository may check hundreds, and the summary stays one readable line.
SUMMARY_NAMES = 5


def _counts(results: Sequence[RecipeResult]) -> tuple[int, int]:
    diagnostics = [d for r in results for d in r.diagnostics]
    errors = sum(d.severity is Severity.ERROR for d in diagnostics)
    return errors, len(diagnostics) - errors


def _checked(results: Sequence[RecipeResult]) -> Checked:
    total = Checked()
    for result in results:
        total.add(result.checked)
    return total


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def _what(checked: Checked) -> str:
    """``2 judges, 2 agents, 2 skills, 44 calibration rows``."""
    return ", ".join([_plural(checked.judges, "judge"), _plural(checked.agents, "agent"),
                      _plural(checked.skills, "skill"),
                      _plural(checked.calibration_rows, "calibration row")])


def _names(results: Sequence[RecipeResult]) -> str:
    names = [r.display for r in results[:SUMMARY_NAMES]]
    if len(results) > SUMMARY_NAMES:
        names.append(f"and {len(results) - SUMMARY_NAMES} more")
    return ", ".join(names)


@dataclass(frozen=True, slots=True)
class More:
    """Stands for the diagnostics of one code in one file that a reader-facing format hides."""

    path: str
    code: str
    severity: Severity
    hidden: int

    @property
    def message(self) -> str:
        return f"… and {self.hidden:,} more ({self.code})"


def collapsed(diagnostics: Sequence[Diagnostic]) -> Iterator[Diagnostic | More]:
    """``diagnostics`` (sorted by path), with those past :data:`REPEATS_SHOWN` of one code in
    one file folded into one :class:`More`, placed at the end of that file's diagnostics."""
    for path, group in groupby(diagnostics, key=lambda d: d.path):
        seen: Counter[str] = Counter()
        hidden: dict[str, Severity] = {}
        for diagnostic in group:
            seen[diagnostic.code] += 1
            if seen[diagnostic.code] <= REPEATS_SHOWN:
                yield diagnostic
            else:
                hidden.setdefault(diagnostic.code, diagnostic.severity)
        for code, severity in hidden.items():
            yield More(path, code, severity, seen[code] - REPEATS_SHOWN)


def render_text(results: Sequence[RecipeResult], *, color: bool = False) -> str:
    """``path:line:col: severity[code] message (hint)`` lines, then a one-line summary."""
    lines = []
    for result in results:
        for d in collapsed(result.diagnostics):
            if isinstance(d, More):
                lines.append(f"{d.path}: {d.message}")
                continue
            severity = f"{_COLORS[d.severity]}{d.severity.value}{_RESET}" if color else None
            lines.append(d.format_line(severity=severity))
    errors, warnings = _counts(results)
    checked = (f"Checked {_plural(len(results), 'recipe')} ({_names(results)}): "
               f"{_what(_checked(results))}")
    summary = (f"{checked}; {_plural(errors, 'error')}, {_plural(warnings, 'warning')}"
               if errors or warnings else f"{checked}; no problems found")
    lines.append(f"{_BOLD}{summary}{_RESET}" if color else summary)
    return "\n".join(lines) + "\n"


def render_json(results: Sequence[RecipeResult], *, color: bool = False) -> str:
    """``{"diagnostics", "recipes", "summary"}``: every diagnostic, with its hint."""
    errors, warnings = _counts(results)
    checked = _checked(results)
    payload = {
        "diagnostics": [d.as_json() for r in results for d in r.diagnostics],
        "recipes": [r.display for r in results],
        "summary": {"errors": errors, "warnings": warnings, "judges": checked.judges,
                    "agents": checked.agents, "skills": checked.skills,
                    "calibration_rows": checked.calibration_rows},
    }
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _github_command(severity: Severity, path: str, line: int | None, column: int | None,
                    code: str, message: str) -> str:
    props = [f"file={_escape_property(path)}"]
    if line is not None:
        props.append(f"line={line}")
    if column is not None:
        props.append(f"col={column}")
    props.append(f"title={_escape_property(code)}")
    return f"::{severity.value} {','.join(props)}::{_escape_data(message)}"


def render_github(results: Sequence[RecipeResult], *, color: bool = False) -> str:
    """GitHub Actions workflow commands: ``::error file=...,line=...,col=...,title=code::msg``."""
    lines = []
    for result in results:
        for d in collapsed(result.diagnostics):
            if isinstance(d, More):
                lines.append(_github_command(d.severity, d.path, None, None, d.code, d.message))
            else:
                message = d.message + (f" ({d.hint})" if d.hint else "")
                lines.append(_github_command(d.severity, d.path, d.line, d.column, d.code,
                                             message))
    errors, warnings = _counts(results)
    lines.append(f"{_plural(errors, 'error')}, {_plural(warnings, 'warning')} "
                 f"in {_plural(len(results), 'recipe')} ({_what(_checked(results))})")
    return "\n".join(lines) + "\n"


def encodable(render: Callable[..., str]) -> Callable[..., str]:
    """``render`` with lone surrogates written as ``\\udXXX`` escapes.

    Messages quote the user's data, and a calibration row may hold a lone
    surrogate (``"\\ud800"`` is valid JSON), which no stream can encode: the
    report must still print (in JSON the escape reads back as the same value).
    """
    def wrapped(results: Sequence[RecipeResult], *, color: bool = False) -> str:
        return render(results, color=color).encode("utf-8", "backslashreplace").decode("utf-8")
    return wrapped


#: The renderers the registry names (SARIF's is in :mod:`.render_check_sarif`).
check_text = encodable(render_text)
check_json = encodable(render_json)
check_github = encodable(render_github)
