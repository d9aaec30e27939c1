"""The regex size count never under-counts what the ``regex`` module's own parser builds.

The oracle parses with ``regex._regex_core`` (the parser ``regex.compile`` runs
before its C compiler, the stage that blows up) and applies the same cost
model to its tree: a repetition with minimum m >= 1 holds m + 1 copies of its
body. :func:`expanded_size` reads the pattern on its own, so it must reach at
least the oracle's size on every pattern ``regex`` accepts, however escapes,
sets, comments, verbose mode and inline flags hide or reveal a count.
"""

from __future__ import annotations

from typing import Any

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from regex import _regex_core as core

from introspection_cli.recipe.regex_cost import expanded_size

UNLIMITED = 10**12
_REPEATS = (core.GreedyRepeat, core.LazyRepeat)  # PossessiveRepeat is a GreedyRepeat


def _parse(pattern: str, flags: int) -> Any:
    """The tree ``regex.compile`` builds before compiling it (None when regex rejects it)."""
    core.DEFAULT_VERSION = regex.DEFAULT_VERSION
    global_flags = flags
    try:
        while True:
            source = core.Source(pattern)
            info = core.Info(global_flags, source.char_type, {})
            info.guess_encoding = core.UNICODE
            source.ignore_space = bool(info.flags & core.VERBOSE)
            try:
                tree = core._parse_pattern(source, info)
                break
            except core._UnscopedFlagSet:
                global_flags = info.global_flags
        if not source.at_end():
            return None
        tree.fix_groups(pattern, bool(info.flags & core.REVERSE), False)
    except (core.error, ValueError, RecursionError):
        return None
    return tree


def _size(node: Any) -> int:
    if isinstance(node, _REPEATS):
        copies = node.min_count + 1 if node.min_count else 1
        return copies * _size(node.subpattern)
    if isinstance(node, core.Sequence):
        return sum(map(_size, node.items))
    if isinstance(node, core.Branch) and not isinstance(node, core.StringSet):
        return sum(map(_size, node.branches))
    if isinstance(node, core.Fuzzy):
        return _size(node.subpattern)
    if isinstance(node, core.Group | core.Atomic | core.LookAround):
        return 1 + _size(node.subpattern)
    if isinstance(node, core.Conditional):
        return 1 + _size(node.yes_item) + _size(node.no_item)
    if isinstance(node, core.LookAroundConditional):
        return 2 + _size(node.subpattern) + _size(node.yes_item) + _size(node.no_item)
    return 1  # a character, set, property, reference, anchor...


def oracle_size(pattern: str, *, verbose: bool = False) -> int | None:
    tree = _parse(pattern, regex.VERBOSE if verbose else 0)
    return None if tree is None else _size(tree)


def assert_not_under(pattern: str, verbose: bool) -> bool:
    """Checks the count against the oracle; False when regex rejects the pattern."""
    expected = oracle_size(pattern, verbose=verbose)
    if expected is None:
        return False
    found = expanded_size(pattern, verbose=verbose, limit=UNLIMITED)
    assert found.size >= expected, (pattern, verbose, expected, found)
    # the cost the limit bounds weighs every node at least 1, so it is never below either
    for ignorecase in (False, True):
        weighed = expanded_size(pattern, verbose=verbose, ignorecase=ignorecase, limit=UNLIMITED)
        assert weighed.cost >= expected, (pattern, verbose, ignorecase, expected, weighed)
    return True


# Tokens that change how the rest of a pattern reads: escapes, sets, comments,
# verbose space, inline flags, fuzzy constraints, literal braces.
ATOMS = [
    "a", ".", "^", "$", r"\d", r"\(", r"\)", r"\{", r"\[", r"\#", "\\ ", "\\\\", r"\x41", r"\x4",
    r"\N{LATIN SMALL LETTER A}", r"\N{SPACE}", r"\p{L}", r"\pL", r"\P{Lu}", r"\p{Script=Latin}",
    r"\g<1>", r"\g<n>", r"\g<0>", r"\1", r"\12", r"\012", r"\R", r"\X", r"\b",
    "[a]", "[]a]", "[^]a]", "[a-]", "[[:alpha:]]", "[[:a]", "[[]", "[(]", "[)]", "[{]", "[#]",
    "[ ]", r"[\]]", r"[\d-z]", "[a--b]", "[a&&b]", "[[a]b]", r"[\p{L}-&&]]", "[a-&&]]", "[--a]",
    "#", " ", "\n", "#c(\n", "#c)\n", "#{1000}\n", "{", "}", "{e<=0}", "{e<=1}", "{i<=1,d<=1}",
    "{1<=e<=2}", "{2i+1d<=3}", "{e<=1:[a-z]}", "{,}", "{ }", "{1 0}", "{1#x\n0}",
    "(?#c)", r"(?#c\))", "(?#c{100})", "(*FAIL)", "(?R)", "(?1)", "(?&n)", "(?P>n)", "(?P=n)",
    "(?+1)", "(?-1)", "(?x)", "(?-x)", "(?i)", "(?V1)", "(?V0)", "(? x)", "(?r)",
    "(?f)", "(?fi)", "ß", "[ß-ﬃ]", r"[\p{L}\p{N}]", "[^ß]",
]
OPENERS = ["(", "(?:", "(?P<n>", "(?<m>", "(?=", "(?!", "(?<=", "(?>", "(?|", "(?x:", "(?-x:",
           "( ?:", "(? :", "(?(1)", "(?(n)", "(?(?=a)", "(?(?<!a)"]
QUANTIFIERS = ["", "", "?", "*", "+", "+?", "*+", "{2}", "{3,}", "{2,5}", "{0,9}", "{,4}", "{1}",
               "{10}", "{100}", "{1000}", " {3}", "{3} ?", "{ 3 }", "{2}?", "{e<=0}{5}"]

_atom = st.tuples(st.sampled_from(ATOMS), st.sampled_from(QUANTIFIERS)).map("".join)


def _patterns(depth: int) -> st.SearchStrategy[str]:
    if depth == 0:
        return st.lists(_atom, min_size=1, max_size=3).map("".join)
    group = st.tuples(st.sampled_from(OPENERS), _patterns(depth - 1),
                      st.sampled_from(["", "|", "|b"]), st.sampled_from([")", ")", ""]),
                      st.sampled_from(QUANTIFIERS)).map("".join)
    return st.lists(_atom | group, min_size=1, max_size=4).map("".join)


@settings(max_examples=1500)
@given(_patterns(3), st.booleans())
def test_structured_patterns_are_never_under_counted(pattern: str, verbose: bool) -> None:
    assert_not_under(pattern, verbose)


_SYMBOLS = st.sampled_from([
    *"()[]{}*+?|\\^$.,-:=!<>#&~_ aAbdeimsxPpNgRV01239\n\t", "(?", "(?x)", "(?V1)", "\\p{",
    "\\N{", "\\g<", "[:", ":]", "{2}", "{10}", "{100}", "{e<=0}", "{1,}", "(?#", "(*",
    "(?P<n>", "(?(", "--", "&&"])


@settings(max_examples=3000)
@given(st.lists(_SYMBOLS, max_size=30).map("".join), st.booleans())
def test_symbol_soup_is_never_under_counted(pattern: str, verbose: bool) -> None:
    assert_not_under(pattern, verbose)


@pytest.mark.parametrize(("pattern", "verbose", "copies"), [
    ("a{1000}", False, 1000),
    ("(?:a{1000}){1000}", False, 1000 + 1002 * 1000),
    ("(a)+", False, 2),                     # the group and its character, copied once more
    (r"\d{4}-\d{2}-\d{2}", False, 8),
    ("a{0,1000}", False, 0),                # a minimum of 0 is not unrolled
    ("(?:a{1,1000}){1,1000}", False, 1 + 3),
    ("(?x)a{1 0}", False, 10),              # verbose mode: the space is not there
    ("a{1 0}", True, 10),                   # the literal's x flag
    ("(?x)a{1#x\n0}", False, 10),           # nor the comment
    ("a{1 0}", False, 0),                   # literal braces without verbose mode
    ("[a{1000}]", False, 0),                # inside a set
    (r"\{1000}", False, 0),                 # an escaped brace
    ("(?#{1000})", False, 0),               # a comment
    ("a(?#x){3}", False, 3),                # the comment is skipped: a is repeated
    ("a(?i){3}", False, 3),                 # so is a flag
    ("(?:a{10}){e<=0}{100}", False, 10 + 12 * 100),  # a constraint allowing no error
    ("[]a]{9}", False, 9),                  # "]" first in a set is a member
    ("(?V1)[[a]{5}]{7}", False, 7),         # a nested set (version 1)
    ("[[a]{5}]{7}", False, 5 + 7),          # version 0: "[[a]", "{5}", a literal "]", "{7}"
    ("(?V1)[a--]]{5}]", False, 5),          # after "--" a member may be "]": the set is "[a--]]"
    ("(?(?=a)(?x)a|b)c{1 0}", False, 10),   # flags leak out of a lookaround conditional
    ("(?|(?x)a|b)c{1 0}", False, 10),       # and out of a branch reset
    ("(?:(?x)a)c{1 0}", False, 0),          # but not out of other groups
])
def test_counts(pattern: str, verbose: bool, copies: int) -> None:
    assert expanded_size(pattern, verbose=verbose, limit=UNLIMITED).copies == copies


@pytest.mark.parametrize("pattern", [
    "(?:a{10000}){10000}", "(?:(?:a{100}){100}){100}", "((((a{100}){100}){100}){100})",
    "(" * 40 + "a" + ")+" * 40, "(?:" * 30 + "a" + "){2}" * 30, "a{99999999999999999999}",
])
def test_explosive_patterns_pass_the_limit_quickly(pattern: str) -> None:
    found = expanded_size(pattern, verbose=False, limit=10_000)
    assert found.over_at is not None and found.cost > 10_000


def test_rereading_after_an_unclosed_group_reference_counts() -> None:
    # regex reads from each "\g<" to the end looking for ">": quadratic parsing
    found = expanded_size("\\g<" * 3000, verbose=False, limit=10_000)
    assert found.over_at is not None
