"""Matcher values: a plain string, or a ``/PATTERN/FLAGS`` regex literal (SPEC §1.1).

A value is a regex literal when it starts with ``/`` and ends with ``/`` followed
only by letters; the letters must be flags from ``imsx``. Patterns are compiled
with the ``regex`` module, which is imported only when a literal is present.

Compiling is bounded: ``regex`` copies a repeated element once per minimum count,
and nested counts multiply, so ``(?:a{10000}){10000}`` would take tens of
gigabytes; under full case folding one character set costs up to 35 KB. Before
compiling, :mod:`regex_cost` estimates that cost without compiling, and a judge
file's literals together may cost at most :data:`MAX_COST` (docs/rules.md,
"Regex size limits").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from introspection_cli.recipe.model import REGEX_FLAG_NAMES, ValueMatcher
from introspection_cli.recipe.regex_cost import Expansion, expanded_size
from introspection_cli.recipe.yamlload import quote

_LITERAL = re.compile(r"/(?P<pattern>.*)/(?P<flags>[A-Za-z]*)", re.DOTALL)

#: Longest pattern compiled. Gate patterns are a few dozen characters.
MAX_PATTERN_LENGTH = 10_000
#: Most cost units (:mod:`regex_cost`, about 300 bytes each) one judge file's regex
#: literals may add up to: about 30 MB and 30 ms to compile; the worst case measured
#: is in docs/rules.md, "Regex size limits".
MAX_COST = 120_000

_SIMPLIFY = ("lower or un-nest the repeat counts: regex builds x{m,n} m+1 times (x+ twice) "
             "and nested counts multiply, while x*, x? and x{0,n} are built once")
_CAUSES = {
    "repeats": ("its repeat counts make regex build too many copies of its elements", _SIMPLIFY),
    "folding": ("its character sets under full case folding (the f flag, or V1, with i) "
                "compile to a branch per character that folds to several (up to 35 KB a set)",
                "drop the f flag (plain i is cheap), or write the set as a property "
                "such as \\p{L}, or lower its repeat counts"),
    "reread": ("regex parses its unclosed \\g< references again up to each next > or ), "
               "which grows with the square of their number",
               "write g for a literal g, or close each reference as \\g<name>"),
    "elements": ("it has too many elements to compile",
                 "shorten it, or split an alternation a|b across matchers (a gate matches "
                 "when any of its matchers does)"),
}


@dataclass(frozen=True, slots=True)
class LiteralError:
    code: str  # invalid-regex | invalid-regex-flag
    message: str
    hint: str


@dataclass
class RegexBudget:
    """What is left of :data:`MAX_COST` for the regex literals of one file."""

    remaining: int = MAX_COST


def parse_value(raw: str, budget: RegexBudget | None = None) -> ValueMatcher | LiteralError:
    """Parse one matcher value; a regex literal is compiled to prove it is valid.

    ``budget`` is shared by the literals of one judge file (a fresh one when
    omitted); a literal that would pass it is an error and is not compiled.
    Each distinct (pattern, flags) is compiled once per process
    (:func:`_compile_problem`): real recipes repeat a handful of patterns
    across many judges, and compiling is most of what checking a literal costs.
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
    problem = _compile_problem(pattern, flags)
    if problem is not None:
        return LiteralError("invalid-regex", f"invalid regex {quote(raw)}: {problem}",
                            "fix the pattern; it is compiled with the Python 'regex' module")
    return ValueMatcher(raw, pattern, flags)


@lru_cache(maxsize=4096)
def _compile_problem(pattern: str, flags: str) -> str | None:
    """Why ``pattern`` with ``flags`` does not compile (the reason and where), or None.

    Only the answer is kept, never the compiled pattern, so the cache stays small
    and a large pattern's memory is freed as soon as it is proven valid.
    """
    try:
        compile_value(ValueMatcher("", pattern, flags), cache=False)
    except Exception as exc:  # regex.error, RecursionError; regex is imported lazily
        position = getattr(exc, "pos", None)
        where = f" at position {position} of the pattern" if position is not None else ""
        reason = getattr(exc, "msg", None) or str(exc) or type(exc).__name__
        return f"{reason}{where}"
    return None


@lru_cache(maxsize=4096)
def _expansion(pattern: str, verbose: bool, ignorecase: bool) -> Expansion:
    """:func:`expanded_size` up to the whole :data:`MAX_COST`, once per distinct pattern."""
    return expanded_size(pattern, verbose=verbose, ignorecase=ignorecase, limit=MAX_COST)


def _size_problem(raw: str, pattern: str, flags: str,
                  budget: RegexBudget) -> LiteralError | None:
    """Why the literal is too large to compile safely; else its cost comes out of ``budget``."""
    if len(pattern) > MAX_PATTERN_LENGTH:
        return LiteralError(
            "invalid-regex", f"regex {quote(raw)} is {len(pattern):,} characters long; "
            f"patterns may have at most {MAX_PATTERN_LENGTH:,}",
            "shorten it, or split an alternation a|b across matchers (a gate matches when "
            "any of its matchers does)")
    verbose, ignorecase = "x" in flags, "i" in flags
    expansion = _expansion(pattern, verbose, ignorecase)
    if expansion.over_at is None and expansion.cost <= budget.remaining:
        budget.remaining -= expansion.cost
        return None
    if budget.remaining < MAX_COST:  # where it passes what this file's literals have left
        expansion = expanded_size(pattern, verbose=verbose, ignorecase=ignorecase,
                                  limit=budget.remaining)
    shared = (" together with this file's other regex literals"
              if budget.remaining < MAX_COST else "")
    cause, hint = _CAUSES[expansion.cause()]
    return LiteralError(
        "invalid-regex", f"regex {quote(raw)} is too complex to compile safely: {cause}; its "
        f"estimated compile cost passes {MAX_COST:,} units{shared} at position "
        f"{expansion.over_at} of the pattern", hint)


#: What makes a plain matcher value read like a pattern (it is then compared as exact text).
_PATTERN_MARKS = ("|", "(?", "\\b", "\\d", ".*", ".+")


def looks_like_pattern(raw: str) -> bool:
    """True when a plain (non-literal) value reads like a regex: it holds ``|``, ``(?``,
    ``\\b``, ``\\d``, ``.*`` or ``.+``, or starts with ``^`` or ends with ``$``."""
    return raw.startswith("^") or raw.endswith("$") or any(m in raw for m in _PATTERN_MARKS)


def literal_for(raw: str) -> str | None:
    """The ``/pattern/flags`` literal a pattern-like plain value was meant to be, when it compiles.

    A value missing only one of its slashes (``/a|b``, ``a|b/i``) keeps what it
    has. None when the literal would not compile, so no hint ever suggests one
    that ``check`` would then reject.
    """
    body = raw[1:] if raw.startswith("/") else raw
    closed = re.fullmatch(r"(?P<pattern>.*)/(?P<flags>[imsx]*)", body, re.DOTALL)
    literal = f"/{closed['pattern']}/{closed['flags']}" if closed else f"/{body}/"
    parsed = parse_value(literal)
    return literal if isinstance(parsed, ValueMatcher) and parsed.is_regex else None


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
