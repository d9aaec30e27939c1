"""Matcher values: a plain string, or a ``/PATTERN/FLAGS`` regex literal (SPEC §1.1).

A value is a regex literal when it starts with ``/`` and ends with ``/`` followed
only by letters; the letters must be flags from ``imsx``. Patterns are compiled
with the ``regex`` module, which is imported only when a literal is present.

Compiling is bounded: ``regex`` copies a repeated element once per minimum count,
and nested counts multiply, so ``(?:a{10000}){10000}`` would take tens of
gigabytes. Before compiling, :mod:`regex_cost` counts those copies without
compiling, and a judge file's literals together may make at most
:data:`MAX_COPIES` (docs/rules.md, "Regex size limits").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from introspection_cli.recipe.model import REGEX_FLAG_NAMES, ValueMatcher
from introspection_cli.recipe.regex_cost import expanded_size
from introspection_cli.recipe.yamlload import quote

_LITERAL = re.compile(r"/(?P<pattern>.*)/(?P<flags>[A-Za-z]*)", re.DOTALL)

#: Longest pattern compiled. Gate patterns are a few dozen characters.
MAX_PATTERN_LENGTH = 10_000
#: Most element copies the repetitions of one judge file's regex literals may add.
#: Compiling that many takes about 10 MB and 10 ms; the worst case measured (full
#: case folding of large character sets, ``(?fi)(?:[\p{L}\p{N}]|b){1666}``) 90 MB, 0.1 s.
MAX_COPIES = 5_000

_SIMPLIFY = ("lower or un-nest the repeat counts: regex builds x{m,n} m+1 times (x+ twice) "
             "and nested counts multiply, while x*, x? and x{0,n} are built once")


@dataclass(frozen=True, slots=True)
class LiteralError:
    code: str  # invalid-regex | invalid-regex-flag
    message: str
    hint: str


@dataclass
class RegexBudget:
    """What is left of :data:`MAX_COPIES` for the regex literals of one file."""

    remaining: int = MAX_COPIES


def parse_value(raw: str, budget: RegexBudget | None = None) -> ValueMatcher | LiteralError:
    """Parse one matcher value; a regex literal is compiled to prove it is valid.

    ``budget`` is shared by the literals of one judge file (a fresh one when
    omitted); a literal that would pass it is an error and is not compiled.
    """
    found = _LITERAL.fullmatch(raw)
    if found is None:
        return ValueMatcher(raw)
    pattern, flags = found.group("pattern"), found.group("flags")
    bad = sorted({f for f in flags if f not in REGEX_FLAG_NAMES})
    if bad:
        return LiteralError("invalid-regex-flag",
                            f"regex literal {quote(raw)} has unknown flag(s) {', '.join(bad)}",
                            "flags after the closing / may be i, m, s and x")
    if len(set(flags)) != len(flags):
        return LiteralError("invalid-regex-flag", f"regex literal {quote(raw)} repeats a flag",
                            "write each flag once")
    too_large = _size_problem(raw, pattern, flags, budget or RegexBudget())
    if too_large is not None:
        return too_large
    value = ValueMatcher(raw, pattern, flags)
    try:
        compile_value(value, cache=False)
    except Exception as exc:  # regex.error, RecursionError; regex is imported lazily
        position = getattr(exc, "pos", None)
        where = f" at position {position} of the pattern" if position is not None else ""
        reason = getattr(exc, "msg", None) or str(exc) or type(exc).__name__
        return LiteralError("invalid-regex", f"invalid regex {quote(raw)}: {reason}{where}",
                            "fix the pattern; it is compiled with the Python 'regex' module")
    return value


def _size_problem(raw: str, pattern: str, flags: str,
                  budget: RegexBudget) -> LiteralError | None:
    """Why the literal is too large to compile safely; else its copies come out of ``budget``."""
    if len(pattern) > MAX_PATTERN_LENGTH:
        return LiteralError(
            "invalid-regex", f"regex {quote(raw)} is {len(pattern):,} characters long; "
            f"patterns may have at most {MAX_PATTERN_LENGTH:,}",
            "shorten it, or split an alternation a|b across matchers (a gate matches when "
            "any of its matchers does)")
    expansion = expanded_size(pattern, verbose="x" in flags, limit=budget.remaining)
    if expansion.over_at is None:
        budget.remaining -= expansion.copies
        return None
    shared = (" together with this file's other regex literals"
              if budget.remaining < MAX_COPIES else "")
    return LiteralError(
        "invalid-regex", f"regex {quote(raw)} is too complex to compile safely: its repeat "
        f"counts make regex build more than {MAX_COPIES:,} copies of its elements{shared} "
        f"(passed at position {expansion.over_at} of the pattern)", _SIMPLIFY)


def compile_value(value: ValueMatcher, *, cache: bool = True) -> Any:
    """Compile a regex literal's pattern with its flags (``regex`` module pattern object).

    ``cache=False`` keeps the compiled pattern out of ``regex``'s cache, for a
    compile that only proves the pattern valid.
    """
    import regex

    flags = 0
    for letter in value.flags:
        flags |= getattr(regex, REGEX_FLAG_NAMES[letter])
    return regex.compile(value.pattern or "", flags, cache_pattern=cache)
