"""Hypothesis: the gate never raises on any event, agrees with a naive oracle, and a
regex that runs out of time always surfaces as :class:`GateTimeout`, never as a miss."""

from __future__ import annotations

from typing import Any

import pytest
import regex
from hypothesis import example, given
from hypothesis import strategies as st

from introspection_cli.evaluation.gate import (
    _FOLDS_ONTO_ASCII,
    GateTimeout,
    _literals,
    as_match_text,
    evaluate_gate,
    gate_applies,
)
from introspection_cli.recipe.model import Matcher, ValueMatcher

FIELDS = {"message": ("role", "text"), "tool": ("name", "input", "output", "status"),
          "feedback": ("rating", "comment")}
WORDS = ["user", "assistant", "refund", "ok", "error", "", "null", "{}", '"x"', "1", "Refund"]
json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.sampled_from(WORDS)
                           | st.text(max_size=8) | st.floats(allow_nan=False),
                           lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.sampled_from(WORDS) | st.text(max_size=4), inner,
                                             max_size=3), max_leaves=8)
event_strategy = st.dictionaries(
    st.sampled_from(["type", "role", "text", "name", "input", "output", "status", "rating",
                     "comment", "id", "at"]) | st.text(max_size=5),
    json_values | st.sampled_from(list(FIELDS)), max_size=6)
PATTERNS = ["refund", "^u", "r$", "\\d+", "(?i)REFUND", "", ".*", "[{}]", "null|ok", "é"]
values = (st.sampled_from(WORDS).map(ValueMatcher)
          | st.tuples(st.sampled_from(PATTERNS), st.sampled_from(["", "i", "s", "ms"]))
          .map(lambda pf: ValueMatcher(f"/{pf[0]}/{pf[1]}", pf[0], pf[1])))


@st.composite
def matchers(draw: st.DrawFn) -> Matcher:
    event = draw(st.sampled_from(list(FIELDS)))
    names = draw(st.lists(st.sampled_from(FIELDS[event]), unique=True, max_size=3))
    return Matcher(event, {name: draw(values) for name in names},  # type: ignore[arg-type]
                   line=draw(st.none() | st.integers(1, 99)))


def oracle_matches(matcher: Matcher, event: dict[str, Any]) -> bool:
    """SPEC §1.1 spelled out directly: type equal and every field matches."""
    if event.get("type") != matcher.event:
        return False
    for name, expected in matcher.fields.items():
        if name not in event:
            return False
        text = as_match_text(event[name])
        if expected.pattern is None:
            if text != expected.raw:
                return False
        else:
            flags = sum(getattr(regex, {"i": "I", "m": "M", "s": "S", "x": "X"}[f])
                        for f in expected.flags)
            if regex.search(expected.pattern, text, flags) is None:
                return False
    return True


@given(st.none() | st.lists(matchers(), max_size=4), st.lists(event_strategy, max_size=5))
def test_the_gate_agrees_with_the_spec_on_any_events(gate: list[Matcher] | None,
                                                     events: list[dict[str, Any]]) -> None:
    result = evaluate_gate(gate, events)
    if gate is None:
        assert result.applies and result.matches == ()
        return
    expected = [(e, m) for e, event in enumerate(events) for m, matcher in enumerate(gate)
                if oracle_matches(matcher, event)]
    assert [(x.event_index, x.matcher_index) for x in result.matches] == expected
    assert result.applies == bool(expected)
    assert gate_applies(gate, events) == result.applies
    # A judge's gate is a tuple, compiled once and kept: it must give the same answer.
    assert evaluate_gate(tuple(gate), events) == result == evaluate_gate(tuple(gate), events)
    for match in result.matches:
        assert match.event_type == gate[match.matcher_index].event == events[match.event_index]["type"]
        assert match.matcher_line == gate[match.matcher_index].line


# Exponential in the `regex` module on "aaa...!" (it defuses the textbook `(a+)+$`,
# which therefore is no test of the time limit; tests/evaluation has that case).
CATASTROPHIC = ["(a|aa)+$", "(aa|a)+$", "(a|aa|aaa)+$", "(?:a|aa)+z", "(a|aa){2,}$",
                "(\\w|\\w\\w)+$", "(a|aa)+(?=z)"]


# Other events are not messages: the bomb pattern may legitimately time out on a
# long run of word characters in a random message too, and we want to know which event.
@given(st.sampled_from(CATASTROPHIC),
       st.lists(event_strategy.filter(lambda event: event.get("type") != "message"), max_size=3),
       st.lists(matchers(), max_size=2), st.integers(0, 3), st.integers(40, 80))
def test_a_regex_timeout_is_always_a_gate_timeout(pattern: str, others: list[dict[str, Any]],
                                                 other_matchers: list[Matcher], position: int,
                                                 length: int) -> None:
    hostile = {"type": "message", "role": "user", "text": "a" * length + "!"}
    events = [*others[:position], hostile, *others[position:]]
    bomb = Matcher("message", {"text": ValueMatcher(f"/{pattern}/", pattern, "")}, line=9)
    gate = [*other_matchers, bomb]
    with pytest.raises(GateTimeout) as caught:
        evaluate_gate(gate, events, timeout=0.01)
    # The matchers before the bomb are tried first on each event, up to the hostile one.
    if not any(oracle_matches(matcher, event) for matcher in other_matchers
               for event in events[:position + 1]):
        # Nothing matched before the hostile event: the first-match answer is unknown too.
        with pytest.raises(GateTimeout):
            gate_applies(gate, events, timeout=0.01)
    assert caught.value.pattern == pattern
    assert caught.value.field == "text"
    assert events[caught.value.event_index] is hostile


# An alternation of literals is answered with `in`; it must give regex's answer or none.
_LITERAL_TEXT = st.text(alphabet=st.sampled_from(list("abkKsSiI z-.é\u0130\u0131\u017f\u212aßǅ")),
                        max_size=6)


@given(st.lists(_LITERAL_TEXT, min_size=1, max_size=3), st.sampled_from(["", "i", "m", "s", "is"]),
       st.booleans(), st.text(alphabet=st.sampled_from(list("abkKsSiI z-.é\u0130\u0131\u017f\u212aßǅ\n")),
                              max_size=12))
@example(["s"], "i", False, "\u017f")  # long s: regex matches it to s, str.lower does not
@example(["k", "x"], "i", True, "\u212a")  # the Kelvin sign
@example(["i"], "i", False, "\u0130")
@example(["ss"], "i", False, "\u00df")  # no full case folding: no match
@example(["\u00e9"], "i", False, "\u00c9")  # a literal beyond ASCII: regex decides
@example(["Is"], "", False, "is Is")
def test_a_literal_alternation_answers_as_regex_does(literals: list[str], flags: str,
                                                   grouped: bool, text: str) -> None:
    body = "|".join(regex.escape(literal, special_only=True) for literal in literals)
    pattern = f"(?:{body})" if grouped else body
    found = _literals(pattern, flags)
    bits = sum(getattr(regex, {"i": "I", "m": "M", "s": "S"}[f]) for f in flags)
    expected = regex.search(pattern, text, bits) is not None
    if found is None:  # only a case-insensitive pattern with a literal beyond ASCII
        assert "i" in flags and not all(literal.isascii() for literal in literals)
        return
    answer = found.find(text)
    assert answer is None or answer == expected
    if answer is None:
        assert "i" in flags and any(c in text for c in "\u0130\u017f\u212a")
    gate = (Matcher("message", {"text": ValueMatcher(f"/{pattern}/{flags}", pattern, flags)}),)
    assert gate_applies(gate, [{"type": "message", "text": text}]) == expected


def test_the_characters_that_fold_onto_ascii_are_all_known() -> None:
    """regex (ignoring case) matches these and no other non-ASCII character to an ASCII
    letter, and str.lower turns no other one into ASCII."""
    import sys

    letter = regex.compile("[a-z]", regex.I)
    folding = {chr(c) for c in range(128, sys.maxunicode + 1)
               if letter.fullmatch(chr(c)) or any(ord(x) < 128 for x in chr(c).lower())}
    assert folding == {"\u0130", "\u017f", "\u212a"}
    assert all(_FOLDS_ONTO_ASCII.search(c) for c in folding)
