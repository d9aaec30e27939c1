"""Gate semantics, SPEC §1.1: any matcher on any event; every field of a matcher."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from introspection_cli.evaluation.gate import (
    GateTimeout,
    _untimed_length,
    as_match_text,
    evaluate_gate,
    gate_applies,
)
from introspection_cli.recipe.model import Matcher, ValueMatcher


def exact(value: str) -> ValueMatcher:
    return ValueMatcher(value)


def regex(pattern: str, flags: str = "") -> ValueMatcher:
    return ValueMatcher(f"/{pattern}/{flags}", pattern, flags)


USER_REFUND = {"type": "message", "role": "user", "text": "Can I get a REFUND?"}
ASSISTANT = {"type": "message", "role": "assistant", "text": "Sure"}
TOOL = {"type": "tool", "name": "lookup", "input": {"b": [1, 2], "a": "x"}, "output": None,
        "status": "ok"}

CASES: list[tuple[str, list[Matcher], list[dict[str, Any]], bool]] = [
    ("type only", [Matcher("tool")], [ASSISTANT, TOOL], True),
    ("type differs", [Matcher("feedback")], [ASSISTANT, TOOL], False),
    ("every field must match", [Matcher("message", {"role": exact("assistant"),
                                                    "text": regex("refund", "i")})],
     [USER_REFUND, ASSISTANT], False),
    ("regex with i flag", [Matcher("message", {"text": regex("refund", "i")})],
     [USER_REFUND], True),
    ("regex is case-sensitive without i", [Matcher("message", {"text": regex("refund")})],
     [USER_REFUND], False),
    ("regex searches, not anchored", [Matcher("message", {"text": regex("get a")})],
     [USER_REFUND], True),
    ("exact is whole-string and case-sensitive", [Matcher("message", {"role": exact("User")})],
     [USER_REFUND], False),
    ("any matcher", [Matcher("feedback"), Matcher("message", {"role": exact("assistant")})],
     [USER_REFUND, ASSISTANT], True),
    ("object value as canonical JSON", [Matcher("tool", {"input": exact('{"a":"x","b":[1,2]}')})],
     [TOOL], True),
    ("null value as JSON null", [Matcher("tool", {"output": exact("null")})], [TOOL], True),
    ("missing field never matches", [Matcher("tool", {"output": regex(".*")})],
     [{"type": "tool", "name": "x"}], False),
    ("unknown event type never matches", [Matcher("message")],
     [{"type": "handoff", "role": "user", "text": "refund"}], False),
]


@pytest.mark.parametrize(("gate", "events", "applies"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_gate_cases(gate: list[Matcher], events: list[dict[str, Any]], applies: bool) -> None:
    assert evaluate_gate(gate, events).applies is applies


def test_ungated_judge_always_applies() -> None:
    assert evaluate_gate(None, []).applies


def test_matches_name_each_event_and_matcher() -> None:
    gate = [Matcher("message", {"role": exact("user")}, line=4), Matcher("tool", line=9)]
    result = evaluate_gate(gate, [ASSISTANT, USER_REFUND, TOOL])
    assert [(m.event_index, m.matcher_index, m.matcher_line) for m in result.matches] == [
        (1, 0, 4), (2, 1, 9)]


def test_regex_timeout_is_an_error_not_a_miss() -> None:
    gate = [Matcher("message", {"text": exact("nothing")}),
            Matcher("message", {"text": regex("(a|aa)+$")})]
    events = [{"type": "message", "role": "user", "text": "a" * 60 + "b"}]
    with pytest.raises(GateTimeout) as caught:
        evaluate_gate(gate, events, timeout=0.05)
    assert "(a|aa)+$" in str(caught.value)
    assert "event 1" in str(caught.value)


@given(st.text())
def test_a_string_always_matches_itself_exactly(text: str) -> None:
    gate = [Matcher("message", {"text": exact(text)})]
    assert evaluate_gate(gate, [{"type": "message", "text": text}]).applies


@given(st.recursive(st.none() | st.booleans() | st.integers(-2**50, 2**50) | st.text(),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8))
def test_non_string_values_match_their_canonical_text(value: object) -> None:
    text = as_match_text(value) if not isinstance(value, str) else value
    gate = [Matcher("tool", {"input": exact(text)})]
    assert evaluate_gate(gate, [{"type": "tool", "input": value}]).applies


def test_extra_event_keys_do_not_disturb_matching() -> None:
    event = {**USER_REFUND, "id": "e1", "at": "2026-11-20T10:00:00Z"}
    assert evaluate_gate([Matcher("message", {"role": exact("user")})], [event]).applies


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)


@given(_JSON_VALUES.filter(lambda value: not isinstance(value, str)))
def test_canonical_text_is_exactly_rfc8785(value: object) -> None:
    """What gates match and the transcript shows is the SPEC §2.2 serialisation."""
    import rfc8785

    try:
        reference = rfc8785.dumps(value).decode("utf-8")  # type: ignore[arg-type]
    except rfc8785.CanonicalizationError:  # a lone surrogate: no canonical form
        return
    assert as_match_text(value) == reference


def test_integers_beyond_json_precision_still_have_a_text() -> None:
    assert as_match_text({"id": 2**64}) == '{"id":18446744073709551616}'


def test_an_exact_field_that_differs_decides_before_any_search() -> None:
    """A matcher needs every field: `status: error` on an `ok` event is a miss whatever the
    regex would do, so the regex is not run (here it would time out)."""
    gate = (Matcher("tool", {"name": regex("(a|aa)+$"), "status": exact("error")}),)
    events = [{"type": "tool", "name": "a" * 60 + "b", "status": "ok"}]
    assert not evaluate_gate(gate, events, timeout=0.05).applies
    assert not gate_applies(gate, events, timeout=0.05)


def test_a_timeout_is_never_remembered() -> None:
    """Answers for short values are remembered between rows; a timeout is no answer."""
    gate = (Matcher("message", {"text": regex("(a|aa)+$")}),)  # a tuple: compiled once, kept
    hostile = [{"type": "message", "text": "a" * 60 + "b"}]
    for _ in range(2):
        with pytest.raises(GateTimeout):
            gate_applies(gate, hostile, timeout=0.05)
    assert gate_applies(gate, [{"type": "message", "text": "aa"}], timeout=0.05)
    assert not gate_applies(gate, [{"type": "message", "text": "ab"}], timeout=0.05)


@pytest.mark.parametrize("pattern", ["refund|invoice|charged twice",
                                     "^(lookup_invoice|create_refund)$", "(?:x|y)", r"a\.b"])
def test_a_literal_alternation_runs_without_the_time_limit(pattern: str) -> None:
    assert _untimed_length(pattern) > 0


@pytest.mark.parametrize("pattern", ["(a|aa)+$", "(?:a|aa)+z", "(a|aa){2,}$", r"(\w|\w\w)+$",
                                     "(a|aa)+(?=z)", "a.b", r"\bfoo", "[ab]", r"(a)\1",
                                     "(?i)x", "(a)(b)", "(?x)a # (a|aa)+", "a*"])
def test_anything_that_can_backtrack_keeps_the_time_limit(pattern: str) -> None:
    assert _untimed_length(pattern) == 0


def test_a_literal_alternation_still_matches_past_its_untimed_length() -> None:
    limit = _untimed_length("refund|invoice")
    gate = [Matcher("message", {"text": regex("refund|invoice")})]
    long_text = "x" * (limit + 1) + "invoice"
    assert evaluate_gate(gate, [{"type": "message", "text": long_text}]).applies
