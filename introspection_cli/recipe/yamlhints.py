"""Advice for the YAML syntax errors people make most, worded from the text around the error.

The parser's own words describe its state, not the slip: a tab in the
indentation is "found character that cannot start any token", and a key
indented one step too far is "mapping values are not allowed here", which reads
like a colon that needs quoting. Looking at the offending line tells them apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
#: A line that is only a key and its colon so far: ``  text`` or ``  - text`` before the ``:``.
_BARE_KEY = re.compile(r"[ ]*(?:-[ ]+)?(?P<key>[^\s:#'\"{}\[\],&*!|>%@`-][^:#]*?)[ ]*")
#: A ``key: value`` line whose value is a plain scalar (which a deeper line would continue).
_KEY_WITH_VALUE = re.compile(r"[ ]*(?:-[ ]+)?(?P<key>[^\s:#'\"][^:#]*?):[ ]+[^\s#|>&*!]")


@dataclass(frozen=True, slots=True)
class Advice:
    message: str
    hint: str
    line: int  # 1-based, in the text given
    column: int


def explain(problem: str, text: str, line: int, column: int) -> Advice | None:
    """Better words for the parser's ``problem`` at 1-based ``line``/``column`` of ``text``.

    None when the error is not one of the slips recognised here.
    """
    lines = _LINE_BREAK.split(text)
    if not 1 <= line <= len(lines):
        return None
    current = lines[line - 1]
    if ("cannot start any token" in problem and current[column - 1:column] == "\t"
            and not current[:column - 1].strip()):
        return Advice(f"invalid YAML: a tab in the indentation of line {line}",
                      "indent with spaces: YAML does not allow tabs for indentation",
                      line, column)
    if "mapping values are not allowed" in problem:
        return _over_indented(lines, line, column)
    return None


def _over_indented(lines: list[str], line: int, column: int) -> Advice | None:
    """A key indented deeper than the ``key: value`` line above it, so that YAML reads it as
    the continuation of that value (where ``: `` is not allowed)."""
    current = lines[line - 1]
    bare = _BARE_KEY.fullmatch(current[:column - 1])
    if bare is None:
        return None  # the colon is inside a value: the parser's own advice (quote it) holds
    above = next((number for number in range(line - 1, 0, -1)
                  if lines[number - 1].strip() and not lines[number - 1].lstrip().startswith("#")),
                 None)
    above_key = _KEY_WITH_VALUE.match(lines[above - 1]) if above is not None else None
    if above is None or above_key is None:
        return None
    indent, above_indent = bare.start("key"), above_key.start("key")
    if indent <= above_indent:
        return None
    key = bare.group("key")
    return Advice(f"invalid YAML: line {line} is indented more than line {above}, so YAML reads "
                  f"'{key}:' as part of the value on line {above}",
                  f"if {key} is a key of its own, start it in column {above_indent + 1} like "
                  f"'{above_key.group('key')}' on line {above}; if the value on line {above} "
                  "goes on and holds ': ', quote it", line, indent + 1)
