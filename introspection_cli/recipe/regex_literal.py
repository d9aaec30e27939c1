"""Matcher values: a plain string, or a ``/PATTERN/FLAGS`` regex literal (SPEC §1.1).

A value is a regex literal when it starts with ``/`` and ends with ``/`` followed
only by letters; the letters must be flags from ``imsx``. Patterns are compiled
with the ``regex`` module, which is imported only when a literal is present.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from introspection_cli.recipe.model import REGEX_FLAG_NAMES, ValueMatcher

_LITERAL = re.compile(r"/(?P<pattern>.*)/(?P<flags>[A-Za-z]*)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class LiteralError:
    code: str  # invalid-regex | invalid-regex-flag
    message: str
    hint: str


def parse_value(raw: str) -> ValueMatcher | LiteralError:
    """Parse one matcher value; a regex literal is compiled to prove it is valid."""
    found = _LITERAL.fullmatch(raw)
    if found is None:
        return ValueMatcher(raw)
    pattern, flags = found.group("pattern"), found.group("flags")
    bad = sorted({f for f in flags if f not in REGEX_FLAG_NAMES})
    if bad:
        return LiteralError("invalid-regex-flag",
                            f"regex literal {raw!r} has unknown flag(s) {', '.join(bad)}",
                            "flags after the closing / may be i, m, s and x")
    if len(set(flags)) != len(flags):
        return LiteralError("invalid-regex-flag", f"regex literal {raw!r} repeats a flag",
                            "write each flag once")
    value = ValueMatcher(raw, pattern, flags)
    try:
        compile_value(value)
    except Exception as exc:  # regex.error; imported lazily
        position = getattr(exc, "pos", None)
        where = f" at position {position} of the pattern" if position is not None else ""
        reason = getattr(exc, "msg", None) or str(exc)
        return LiteralError("invalid-regex", f"invalid regex {raw!r}: {reason}{where}",
                            "fix the pattern; it is compiled with the Python 'regex' module")
    return value


def compile_value(value: ValueMatcher) -> Any:
    """Compile a regex literal's pattern with its flags (``regex`` module pattern object)."""
    import regex

    flags = 0
    for letter in value.flags:
        flags |= getattr(regex, REGEX_FLAG_NAMES[letter])
    return regex.compile(value.pattern or "", flags)
