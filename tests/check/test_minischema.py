"""The fast schema validator reports exactly what jsonschema reports, on our schemas.

The oracle is ``jsonschema``'s Draft 2020-12 validator with the two meanings
the minischema docstring gives: ``pattern`` evaluated as ECMA-262 by
``regress`` (the engine ``check-jsonschema`` uses for JSON Schema's regex
dialect), where ``jsonschema`` uses Python's ``re`` and its ``$`` also matches
before a final newline; and NaN outside every ``minimum``/``maximum``, where
``jsonschema``'s comparisons are false both ways. Everything else is
``jsonschema``'s own code.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import regress
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator, ValidationError, validators

from introspection_cli.minischema import UnsupportedSchema, Validator, python_pattern
from introspection_cli.resources import load_schema

SCHEMAS = ["judge", "agent", "skill"]


def _ecma_pattern(validator: Any, pattern: str, instance: Any, schema: Any
                  ) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and regress.Regex(pattern).find(instance) is None:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _bound(name: str, outside: Any) -> Any:
    def check(validator: Any, bound: Any, instance: Any, schema: Any
              ) -> Iterator[ValidationError]:
        if validator.is_type(instance, "number") and (
                (isinstance(instance, float) and math.isnan(instance)) or outside(instance, bound)):
            yield ValidationError(f"{instance!r} fails {name} {bound!r}")
    return check


Oracle = validators.extend(Draft202012Validator, {
    "pattern": _ecma_pattern,
    "minimum": _bound("minimum", lambda value, bound: value < bound),
    "maximum": _bound("maximum", lambda value, bound: value > bound),
})

# Line breaks and other characters where Python's and ECMA's regex dialects differ
# (a final newline for $, \x1c-\x1f, \x85 and U+FEFF for \s) are among the strings.
scalars = st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-3, 3) \
    | st.sampled_from([float("nan"), float("inf"), -float("inf"), 2.0000001, -0.0]) \
    | st.sampled_from(["", " ", "openai", "anthropic", "message", "tool", "feedback", "user",
                       "x", "sample-judge", "Bad_Name", "/a|b/i", "gpt", "a" * 70,
                       "sample-judge\n", "a\n", "\n", "a\r\n", "a\u2028", "x\n\n", "\x1c",
                       "\x85", "\ufeff", " \ufeff\t", "\u3000", "\xa0", "a-\nb"])
keys = st.sampled_from(["name", "description", "on", "llm", "instructions", "provider", "model",
                        "temperature", "max_output_tokens", "event", "match", "role", "text",
                        "status", "rating", "input", "skills", "license", "metadata",
                        "compatibility", "allowed-tools", "extra"])
values = st.recursive(scalars, lambda c: st.lists(c, max_size=3)
                      | st.dictionaries(keys, c, max_size=4), max_leaves=12)


def _errors(validator: Any, instance: Any) -> Counter[tuple[Any, ...]]:
    return Counter((tuple(e.absolute_path), e.validator) for e in validator.iter_errors(instance))


@pytest.mark.parametrize("name", SCHEMAS)
@settings(max_examples=400, deadline=None)
@given(instance=st.dictionaries(keys, values, max_size=6))
def test_same_errors_as_jsonschema(name: str, instance: dict[str, Any]) -> None:
    schema = load_schema(name)
    assert _errors(Validator(schema), instance) == _errors(Oracle(schema), instance)


@pytest.mark.parametrize("name", SCHEMAS)
@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_same_errors_on_mutated_valid_documents(name: str, data: st.DataObject) -> None:
    valid: dict[str, Any] = {
        "judge": {"name": "a", "description": "d", "instructions": "i",
                  "llm": {"provider": "openai", "model": "m", "temperature": 1},
                  "on": [{"event": "message", "match": {"role": "user", "text": "/x/"}},
                         {"event": "tool", "match": {"name": "t", "status": "ok"}}]},
        "agent": {"name": "a", "description": "d", "skills": ["s"]},
        "skill": {"name": "s", "description": "d", "metadata": {"a": "b"},
                  "allowed-tools": ["x"]},
    }[name]
    target: Any = valid
    for _ in range(data.draw(st.integers(0, 3))):
        if isinstance(target, dict) and target:
            key = data.draw(st.sampled_from(sorted(target)))
            if data.draw(st.booleans()):
                target[key] = data.draw(values)
                break
            target = target[key]
        elif isinstance(target, list) and target:
            target = target[data.draw(st.integers(0, len(target) - 1))]
    schema = load_schema(name)
    assert _errors(Validator(schema), valid) == _errors(Oracle(schema), valid)


def test_unsupported_keyword_is_refused() -> None:
    with pytest.raises(UnsupportedSchema):
        Validator({"type": "object", "patternProperties": {"x": {}}})


@pytest.mark.parametrize(("name", "instance", "error"), [
    ("agent", {"name": "support-agent\n"}, (("name",), "pattern")),
    ("judge", {"name": "j", "description": "d", "instructions": "i",
               "llm": {"provider": "openai", "model": "m", "temperature": float("nan")}},
     (("llm", "temperature"), "minimum")),
])
def test_where_jsonschema_differs_minischema_follows_json_schema(
        name: str, instance: dict[str, Any], error: tuple[Any, ...]) -> None:
    schema = load_schema(name)
    assert error in _errors(Validator(schema), instance)
    assert error not in _errors(Draft202012Validator(schema), instance)  # jsonschema lets it by


@settings(max_examples=300)
@given(st.sampled_from(["^[a-z0-9]+(-[a-z0-9]+)*$", r"\S", r"^\s*$", r"[\d\w]+", "a.b", r"x\.y",
                        "[]", "[^]", "^(?:ab|c)?$", "[a-]", r"^\u0041$"]),
       st.text(st.sampled_from("ab-cxy.A09_ \t\n\r\x0b\x0c\x1c\x85\xa0\u2028\ufeff\u3000é"),
               max_size=6))
def test_patterns_match_what_ecma_262_matches(pattern: str, text: str) -> None:
    expected = regress.Regex(pattern).find(text) is not None
    assert (re.search(python_pattern(pattern), text) is not None) == expected
