"""Verdict parsing: only a schema-valid verdict is a verdict; everything else keeps its reason."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from introspection_cli.evaluation.providers.interface import ModelReply
from introspection_cli.evaluation.verdict import (
    InvalidReply,
    ParsedVerdict,
    parse_reply,
    validate_verdict,
)

VALID = {"reasoning": "The agent opened a refund.", "verdict": "pass"}


@pytest.mark.parametrize("arguments", [json.dumps(VALID), VALID])
def test_tool_arguments_as_json_text_or_object(arguments: object) -> None:
    assert parse_reply(ModelReply(arguments, None)) == ParsedVerdict("pass", VALID["reasoning"])


INVALID_TOOL_ARGUMENTS = [
    ('{"reasoning": "The agent did', "not valid JSON"),
    (json.dumps({"reasoning": "ok", "verdict": "maybe"}), "not one of"),
    (json.dumps({"reasoning": "ok", "verdict": "PASS"}), "not one of"),
    (json.dumps({"verdict": "pass"}), "no reasoning"),
    (json.dumps({"reasoning": "  ", "verdict": "pass"}), "no reasoning"),
    (json.dumps({"reasoning": 3, "verdict": "pass"}), "no reasoning"),
    (json.dumps({"reasoning": "ok", "verdict": "pass", "score": 1}), "unexpected keys: score"),
    ('{"reasoning": "ok", "verdict": "fail", "verdict": "pass"}', "appears twice"),
    ('["pass"]', "not an object"),
    ("NaN", "not valid JSON"),
    ("", "not valid JSON"),
]


@pytest.mark.parametrize(("arguments", "reason"), INVALID_TOOL_ARGUMENTS)
def test_invalid_tool_arguments_are_errors_with_reason(arguments: str, reason: str) -> None:
    result = parse_reply(ModelReply(arguments, None))
    assert isinstance(result, InvalidReply)
    assert reason in result.reason


def test_truncation_says_the_reply_was_cut_off() -> None:
    result = parse_reply(ModelReply('{"reasoning": "x', None, stop_reason="length"))
    assert isinstance(result, InvalidReply)
    assert "cut off" in result.reason


def test_text_fallback_accepts_a_valid_json_object() -> None:
    text = 'Sure. {"note": 1} then {"reasoning": "Refund opened.", "verdict": "fail"} done'
    assert parse_reply(ModelReply(None, text)) == ParsedVerdict("fail", "Refund opened.")


@pytest.mark.parametrize("text", ["I think it passes.", '{"verdict": "pass"}',
                                  '{"reasoning": "x", "verdict": "yes"}', "{", "pass"])
def test_text_without_a_valid_verdict_is_an_error(text: str) -> None:
    result = parse_reply(ModelReply(None, text))
    assert isinstance(result, InvalidReply)
    assert "no submit_verdict call" in result.reason


def test_refusal_and_empty_reply_are_errors() -> None:
    refused = parse_reply(ModelReply(None, None, refusal="I can't help with that."))
    assert isinstance(refused, InvalidReply) and "refused" in refused.reason
    empty = parse_reply(ModelReply(None, None, stop_reason="no choices in the reply"))
    assert isinstance(empty, InvalidReply) and "no choices" in empty.reason


@given(st.text())
def test_arbitrary_text_never_raises_and_only_valid_objects_pass(text: str) -> None:
    for reply in (ModelReply(text, None), ModelReply(None, text)):
        result = parse_reply(reply)
        if isinstance(result, ParsedVerdict):
            assert result.verdict in ("pass", "fail", "not_applicable")
            assert result.reasoning.strip()


@given(st.sampled_from(["pass", "fail", "not_applicable"]), st.text(min_size=1).filter(str.strip))
def test_every_valid_verdict_round_trips(verdict: str, reasoning: str) -> None:
    obj = {"reasoning": reasoning, "verdict": verdict}
    assert validate_verdict(obj) == ParsedVerdict(verdict, reasoning)  # type: ignore[arg-type]
    assert parse_reply(ModelReply(json.dumps(obj), None)) == ParsedVerdict(verdict, reasoning)  # type: ignore[arg-type]
