"""The position-keeping loader: YAML 1.2 core scalars, positions, and no crash on any input."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from introspection_cli.recipe.yamlload import (
    Mark,
    YamlProblem,
    character_offset,
    decode,
    escape_text,
    load_mapping,
    quote,
)
from introspection_cli.recipe.yamlscalars import resolve_core_scalar


@pytest.mark.parametrize(("text", "value"), [
    ("on", "on"), ("off", "off"), ("yes", "yes"), ("no", "no"), ("y", "y"),
    ("1:30", "1:30"), ("2024-01-01", "2024-01-01"), ("true", True), ("False", False),
    ("~", None), ("null", None), ("", None), ("12", 12), ("-3", -3), ("0o17", 15),
    ("0x1F", 31), ("1.5", 1.5), ("1e3", 1000.0), ("0.5.1", "0.5.1"), ("+.inf", float("inf")),
    ("1_000", "1_000"), ("010", 10),
])
def test_plain_scalars_follow_the_yaml_1_2_core_schema(text: str, value: object) -> None:
    assert resolve_core_scalar(text) == value
    assert type(resolve_core_scalar(text)) is type(value)


def test_on_key_stays_a_string_and_positions_are_one_based() -> None:
    doc = load_mapping("name: x\non:\n  - event: message\n    match: {role: user}\n")
    assert list(doc.data) == ["name", "on"]
    assert doc.positions.key(("on",)) == Mark(2, 1)
    assert doc.positions.value(("on", 0, "event")) == Mark(3, 12)
    assert doc.positions.value(("on", 0, "match", "role")) == Mark(4, 19)
    assert doc.positions.value(("on", 0, "missing", "deeper")) == Mark(3, 5)


def test_duplicate_key_names_both_lines() -> None:
    with pytest.raises(YamlProblem) as caught:
        load_mapping("a: 1\nb: 2\na: 3\n")
    assert caught.value.code == "yaml-duplicate-key"
    assert caught.value.mark == Mark(3, 1)
    assert "line 1" in caught.value.message


def test_billion_laughs_is_rejected_without_expanding() -> None:
    levels = ["a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol,lol]"]
    for i in range(1, 10):
        prev, cur = chr(96 + i), chr(97 + i)
        levels.append(f"{cur}: &{cur} [{', '.join(['*' + prev] * 10)}]")
    with pytest.raises(YamlProblem) as caught:
        load_mapping("\n".join(levels) + "\n")
    assert caught.value.code == "yaml-too-large"


def test_shared_alias_within_budget_is_fine() -> None:
    doc = load_mapping("base: &b {provider: openai}\nother: *b\n")
    assert doc.data["other"] == {"provider": "openai"}


def test_front_matter_offset_and_string_mode() -> None:
    doc = load_mapping("name: 123\nversion: 1.0\n", line_offset=1, scalars="string")
    assert doc.data == {"name": "123", "version": "1.0"}
    assert doc.positions.value(("name",)) == Mark(2, 7)


@pytest.mark.parametrize(("data", "code"), [
    (b"\xef\xbb\xbfa: 1\n", "bom"),
])
def test_bom_is_reported_but_text_is_kept(data: bytes, code: str) -> None:
    text, problems = decode(data)
    assert text == "a: 1\n"
    assert [p.code for p in problems] == [code]


def test_invalid_utf8_points_at_the_byte() -> None:
    with pytest.raises(YamlProblem) as caught:
        decode(b"a: 1\nbb: \xc3\x28\n")
    assert caught.value.code == "encoding"
    assert caught.value.mark == Mark(2, 5)


@pytest.mark.parametrize(("text", "code"), [
    ("", "yaml-empty"), ("# only a comment\n", "yaml-empty"), ("- a\n", "yaml-not-mapping"),
    ("just text\n", "yaml-not-mapping"), ("a: [\n", "yaml-syntax"), ("a: 1\n---\nb: 2\n", "yaml-syntax"),
    ("? [a]\n: b\n", "yaml-key-type"), ("a: !custom x\n", "yaml-tag"), ("a: &x [*x]\n", "yaml-recursive-alias"),
    ("a: " + "[" * 150 + "]" * 150 + "\n", "yaml-too-deep"),
])
def test_bad_documents_raise_a_problem_with_a_code(text: str, code: str) -> None:
    with pytest.raises(YamlProblem) as caught:
        load_mapping(text)
    assert caught.value.code == code


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_random_text_never_raises_anything_but_a_problem(text: str) -> None:
    try:
        doc = load_mapping(text)
    except YamlProblem as problem:
        assert problem.code
        return
    assert isinstance(doc.data, dict)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_never_raise_anything_but_a_problem(data: bytes) -> None:
    try:
        text, _ = decode(data)
        load_mapping(text)
    except YamlProblem:
        pass


# YAML streams may not contain raw control characters; JSON strings may.
_printable = st.characters(blacklist_categories=("Cc", "Cs", "Cn"), blacklist_characters="\ufeff")
_texts = st.text(_printable, max_size=20)
_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | _texts,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(_printable, min_size=1, max_size=10), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(_printable, min_size=1, max_size=10), _json_values, min_size=1, max_size=5))
def test_json_shaped_yaml_round_trips(data: dict[str, object]) -> None:
    # JSON is YAML 1.2 (PyYAML's emitter is not: it writes 1.1, e.g. an unquoted '0E0').
    assert load_mapping(json.dumps(data, ensure_ascii=False)).data == data
    assert load_mapping(json.dumps(data, ensure_ascii=False, indent=2)).data == data


@pytest.mark.parametrize(("text", "mark"), [
    ("a: 'éééééééééééééééééééé'\nb: \x01\n", Mark(2, 4)),  # multi-byte text on an earlier line
    ("a: é\x01\n", Mark(1, 5)),                             # on the same line
    ("é: 'x'\nb: 'ü€😀' \x02\n", Mark(2, 10)),               # 2-, 3- and 4-byte characters
    ("😀: 1\n\x7f", Mark(2, 1)),
    ("\x01", Mark(1, 1)),
])
def test_a_control_character_is_reported_where_it_is(text: str, mark: Mark) -> None:
    with pytest.raises(YamlProblem) as caught:
        load_mapping(text)
    assert caught.value.code == "yaml-syntax"
    assert caught.value.mark == mark


def test_a_control_character_in_front_matter_keeps_the_line_offset() -> None:
    with pytest.raises(YamlProblem) as caught:
        load_mapping("name: 'ß'\ndescription: 'ß' \x03\n", line_offset=1)
    assert caught.value.mark == Mark(3, 18)


@given(st.text(max_size=30), st.sampled_from("\x01\x02\x08\x7f\x9f\ufffe"), st.text(max_size=30))
def test_the_reported_position_is_the_control_characters_own(
        before: str, control: str, after: str) -> None:
    text = before + control + after
    index = text.index(control)
    assert character_offset(text, len(text[:index].encode("utf-8", "surrogatepass"))) == index


@pytest.mark.parametrize(("text", "shown"), [
    ("support-agent\n", "'support-agent\\n'"),
    ("a\rb\tc\x1b[31m\x85\u2028\u202e", "'a\\rb\\tc\\x1b[31m\\x85\\u2028\\u202e'"),
    ("\ud800", "'\\ud800'"),
    ("plain é ß 😀 'q' \\", "'plain é ß 😀 'q' \\'"),
    ("x" * 100, "'" + "x" * 79 + "…'"),
])
def test_quoted_user_text_has_no_control_characters(text: str, shown: str) -> None:
    assert quote(text) == shown


@given(st.text())
def test_escaped_text_is_printable_and_one_line(text: str) -> None:
    escaped = escape_text(text)
    assert escaped.isprintable()
    assert escaped == text or not text.isprintable()


@pytest.mark.parametrize("separator", ["\x85", "\u2028", "\u2029"])
@pytest.mark.parametrize("line_break", ["\n", "\r\n", "\r"])
def test_only_yaml_1_2_line_breaks_count_as_lines(separator: str, line_break: str) -> None:
    # libyaml (YAML 1.1) also ends a line at NEL and the Unicode separators; YAML 1.2,
    # editors and the rest of the tool do not.
    text = line_break.join(["a: 'x{0}y'", "b: \"x{0}y\"", "c: [1,", "    2]", "d: 4", ""])
    doc = load_mapping(text.format(separator))
    assert doc.positions.key(("b",)) == Mark(2, 1)
    assert doc.positions.value(("c", 1)) == Mark(4, 5)
    assert doc.positions.value(("d",)) == Mark(5, 4)


def test_a_syntax_error_after_a_unicode_separator_is_on_its_own_line() -> None:
    with pytest.raises(YamlProblem) as caught:
        load_mapping("a: 'x\u2028y'\nb: [1\nc: 2\n")
    assert caught.value.mark is not None and caught.value.mark.line in (3, 4)
    with pytest.raises(YamlProblem) as plain:
        load_mapping("a: 'x y'\nb: [1\nc: 2\n")
    assert caught.value.mark == plain.value.mark
