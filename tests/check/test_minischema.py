"""The fast schema validator reports exactly what jsonschema reports, on our schemas."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from introspection_cli.recipe.minischema import UnsupportedSchema, Validator
from introspection_cli.resources import load_schema

SCHEMAS = ["judge", "agent", "skill"]

scalars = st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-3, 3, allow_nan=False) \
    | st.sampled_from(["", " ", "openai", "anthropic", "message", "tool", "feedback", "user",
                       "x", "sample-judge", "Bad_Name", "/a|b/i", "gpt", "a" * 70])
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
    assert _errors(Validator(schema), instance) == \
        _errors(Draft202012Validator(schema), instance)


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
    assert _errors(Validator(schema), valid) == _errors(Draft202012Validator(schema), valid)


def test_unsupported_keyword_is_refused() -> None:
    with pytest.raises(UnsupportedSchema):
        Validator({"type": "object", "patternProperties": {"x": {}}})
