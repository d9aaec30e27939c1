"""A candidate quoting a row outside train is found, however its spacing and case differ."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from introspection_cli.alignment.candidates import refusal, tidy
from introspection_cli.alignment.leakage import (
    QUOTE_SPAN,
    find_quote,
    guarded_row,
    normalise,
    strings_in,
)

TEXT = "Hi, I was charged twice for invoice INV-2291. Can I get a refund please?"


def row(text: str, split: str | None = "dev", **extra: object) -> dict[str, object]:
    return {"conversation_id": "c1", "events": [
        {"type": "message", "role": "user", "text": text}, *extra.get("events", [])]}


def test_normalise_folds_case_width_and_every_kind_of_whitespace() -> None:
    assert normalise("  Refund\u00a0\tREQUEST\r\n\n ＩＮＶ ") == "refund request inv"


def test_a_40_character_span_is_a_quote_and_39_is_not() -> None:
    guarded = [guarded_row(3, "c1", "dev", row(TEXT))]
    span = normalise(TEXT)[10:10 + QUOTE_SPAN]
    assert len(span) == 40
    quote = find_quote("Rubric. " + span.upper() + " More.", guarded)
    assert quote is not None and (quote.line, quote.conversation_id) == (3, "c1")
    assert find_quote("Rubric:" + span[:39] + "| more", guarded) is None


def test_a_quote_with_other_line_breaks_and_spacing_is_found() -> None:
    guarded = [guarded_row(1, "c1", "test", row(TEXT))]
    reflowed = "charged twice for\n   invoice INV-2291.\n\tCan I get"
    assert find_quote(reflowed, guarded) is not None


def test_tool_inputs_outputs_and_feedback_are_guarded_too() -> None:
    output = "The account was suspended for repeated chargebacks on card ending 4242."
    judge_input = row("short", events=[
        {"type": "tool", "name": "lookup", "input": {"q": "x"}, "output": {"note": output},
         "status": "ok"}])
    guarded = [guarded_row(1, "c1", "dev", judge_input)]
    assert find_quote(output[5:60], guarded) is not None
    assert list(strings_in({"a": ["x", {"b": "y"}], "c": 1})) == ["x", "y"]


def test_short_texts_cannot_be_quoted_and_an_empty_candidate_quotes_nothing() -> None:
    guarded = [guarded_row(1, "c1", "dev", row("yes please, thank you"))]
    assert guarded[0].texts == ()
    assert find_quote("", guarded) is None


def test_refusal_names_the_quote_rule_and_the_row() -> None:
    guarded = [guarded_row(7, "conv_9", None, row(TEXT))]
    check = refusal(tidy("Pass when: " + TEXT), "Old rubric.\n", guarded)
    assert check is not None and check.rule == "no-quote"
    assert "conv_9 (line 7, no split)" in check.detail


def test_the_other_refusals() -> None:
    assert refusal("", "x", []) is not None
    unchanged = refusal(tidy("Old rubric.  \r\n"), "Old rubric.\n", [])
    assert unchanged is not None and unchanged.rule == "changes-something"
    unwritable = refusal("Bad \x07 bell\n", "x", [])
    assert unwritable is not None and unwritable.rule == "writable"
    long = refusal("a" * 40_000 + "\n", "x", [])
    assert long is not None and long.rule == "length"
    assert refusal("A new rubric.\n", "Old rubric.\n", []) is None


def test_tidy_makes_one_spelling_of_a_rubric() -> None:
    assert tidy("\n\n  Line one.  \r\nLine two.\t\r\r\n\n") == "  Line one.\nLine two.\n"
    assert tidy(" \n\t\n") == ""


_words = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=0,
                 max_size=30)


@given(before=_words, after=_words, text=st.text(min_size=QUOTE_SPAN, max_size=120),
       start=st.integers(0, 80), spacing=st.sampled_from([" ", "  ", "\n", "\t \n"]))
def test_any_span_of_a_guarded_text_is_found_in_any_surroundings(
        before: str, after: str, text: str, start: int, spacing: str) -> None:
    guarded = [guarded_row(1, "c1", "dev", row(text))]
    folded = normalise(text)
    if len(folded) < QUOTE_SPAN:
        return  # whitespace collapsed: too short to quote
    start = min(start, len(folded) - QUOTE_SPAN)
    span = folded[start:start + QUOTE_SPAN]
    candidate = before + " " + spacing.join(span.split(" ")) + " " + after
    assert find_quote(candidate, guarded) is not None


@given(candidate=st.text(alphabet="abc ", max_size=200))
def test_text_sharing_no_40_character_window_is_not_a_quote(candidate: str) -> None:
    guarded = [guarded_row(1, "c1", "dev", row("xyz " * 30))]
    assert find_quote(candidate, guarded) is None
