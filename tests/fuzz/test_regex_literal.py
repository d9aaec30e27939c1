"""Hypothesis: the ``/PATTERN/FLAGS`` parser never raises and round-trips what it accepts."""

from __future__ import annotations

import itertools

import regex
from hypothesis import given
from hypothesis import strategies as st

from introspection_cli.recipe.model import REGEX_FLAG_NAMES, ValueMatcher
from introspection_cli.recipe.regex_literal import LiteralError, compile_value, parse_value

LITERAL_CODES = {"invalid-regex", "invalid-regex-flag"}
# Regex syntax, slashes and letters that look like flags: most draws are near a boundary.
PATTERN_CHARS = st.sampled_from([*"()[]{}*+?|\\^$.,-:=!<>#/ aAbimsx01\n", "(?", "\\p{", "{2,1}"])
patterns = st.lists(PATTERN_CHARS, max_size=16).map("".join) | st.text(max_size=20)
valid_flags = st.sampled_from([
    "".join(p) for n in range(5) for p in itertools.permutations("imsx", n)])


def oracle_compiles(pattern: str, flags: str) -> bool:
    """Whether the ``regex`` module itself accepts the pattern (the parser's contract)."""
    bits = 0
    for letter in flags:
        bits |= getattr(regex, REGEX_FLAG_NAMES[letter])
    try:
        regex.compile(pattern, bits)
    except Exception:  # regex.error, and whatever else a hostile pattern provokes
        return False
    return True


@given(st.text(max_size=40) | st.builds(lambda p, f: f"/{p}/{f}", patterns, st.text(max_size=4)))
def test_any_value_parses_to_a_matcher_or_a_coded_error(raw: str) -> None:
    parsed = parse_value(raw)
    if isinstance(parsed, LiteralError):
        assert parsed.code in LITERAL_CODES
        assert parsed.message and parsed.hint
    else:
        assert isinstance(parsed, ValueMatcher) and parsed.raw == raw


@given(st.text(max_size=40).filter(lambda s: not (s.startswith("/") and len(s) > 1)))
def test_a_value_not_wrapped_in_slashes_is_an_exact_string(raw: str) -> None:
    assert parse_value(raw) == ValueMatcher(raw)


@given(patterns, valid_flags)
def test_a_valid_literal_compiles_and_round_trips(pattern: str, flags: str) -> None:
    raw = f"/{pattern}/{flags}"
    parsed = parse_value(raw)
    if not oracle_compiles(pattern, flags):
        assert isinstance(parsed, LiteralError) and parsed.code == "invalid-regex"
        return
    assert parsed == ValueMatcher(raw, pattern, flags)
    compiled = compile_value(parsed)
    assert compiled.pattern == pattern
    for letter in flags:
        assert compiled.flags & getattr(regex, REGEX_FLAG_NAMES[letter])
    assert f"/{parsed.pattern}/{parsed.flags}" == raw


@given(patterns, st.text(alphabet=st.characters(categories=["Lu", "Ll"]), min_size=1, max_size=4)
       .filter(lambda f: f.isascii() and any(c not in REGEX_FLAG_NAMES for c in f)))
def test_an_unknown_flag_is_a_flag_error_whatever_the_pattern(pattern: str, flags: str) -> None:
    parsed = parse_value(f"/{pattern}/{flags}")
    assert isinstance(parsed, LiteralError) and parsed.code == "invalid-regex-flag"


@given(patterns, st.sampled_from("imsx"), valid_flags)
def test_a_repeated_flag_is_a_flag_error(pattern: str, repeated: str, others: str) -> None:
    flags = repeated + others + repeated
    parsed = parse_value(f"/{pattern}/{flags}")
    assert isinstance(parsed, LiteralError) and parsed.code == "invalid-regex-flag"
