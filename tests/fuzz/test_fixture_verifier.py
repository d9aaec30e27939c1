"""Hypothesis: the calibration-row verifier takes any bytes and any JSON without raising.

``tests/fixture`` already covers the canonicaliser and one-character edits of a
valid row; these properties cover everything else a line can hold: random
bytes, random JSON objects, valid rows with one field replaced by random JSON,
and whole files mixing them (blank lines, duplicates, every layout).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from introspection_cli.fixture import (
    REJECTION_CODES,
    LineResult,
    judge_input_of,
    snapshot_hash,
    verify_calibration_file,
    verify_fixture_line,
)
from tests.fixture.rowmaker import make_row

# JSON as a parser returns it: finite floats, big integers, any text (surrogates are
# excluded here; see test_lone_surrogate_in_a_shown_value_is_printable below).
json_scalars = (st.none() | st.booleans() | st.integers() | st.text(max_size=12)
                | st.floats(allow_nan=False, allow_infinity=False))
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                           max_leaves=12)
# Values RFC 8785 can hash (integers within the IEEE-754 safe range).
jcs_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | st.text(max_size=12)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=4),
    max_leaves=12)
TOP_LEVEL = ("schema_version", "record_type", "ok", "engine", "source", "judge_input",
             "snapshot_hash", "expected", "split")


def assert_well_formed(result: LineResult, line: int) -> None:
    """Every rejection has a known code and a usable message; a row only when trusted."""
    assert result.line == line
    for rejection in result.rejections:
        assert rejection.line == line
        assert rejection.code in REJECTION_CODES
        assert rejection.message.strip()
    trusted = all(r.code == "fixture-unlabelled" for r in result.rejections)
    assert (result.row is not None) == (trusted and _parses_to_object(result))


def _parses_to_object(result: LineResult) -> bool:
    return not any(r.code == "fixture-json" for r in result.rejections)


def assert_row_is_consistent(result: LineResult) -> None:
    if result.row is None:
        return
    row = result.row
    assert row.conversation_id == row.judge_input["conversation_id"]
    assert row.snapshot_hash == snapshot_hash(row.judge_input)
    # Read back from the line's bytes, judge_input is the verified value exactly (repr
    # tells 1 from 1.0 and True, and a key order apart, which == does not).
    assert repr(judge_input_of(row.text)) == repr(row.judge_input)
    assert row.expected in ("pass", "fail", "not_applicable", None)
    assert row.split in ("train", "dev", "test", None)


@given(st.binary(max_size=300), st.integers(min_value=1, max_value=10**6))
def test_any_bytes_give_a_line_result(data: bytes, line: int) -> None:
    result = verify_fixture_line(data, line)
    assert_well_formed(result, line)
    assert_row_is_consistent(result)


@given(st.dictionaries(st.sampled_from(TOP_LEVEL) | st.text(max_size=8), json_values,
                       max_size=10))
def test_any_json_object_gives_a_line_result(obj: dict[str, Any]) -> None:
    result = verify_fixture_line(json.dumps(obj).encode(), 7)
    assert_well_formed(result, 7)
    assert_row_is_consistent(result)


def _replace(row: dict[str, Any], path: tuple[str, ...], value: object) -> dict[str, Any]:
    edited = copy.deepcopy(row)
    target = edited
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return edited


FIELD_PATHS = [(key,) for key in TOP_LEVEL] + [
    ("engine", "version"), ("engine", "protocol_version"), ("engine", "contract_version"),
    ("source", "conversation_id"), ("source", "runtime_url"), ("source", "exported_at"),
    ("source", "deployment_id"), ("judge_input", "conversation_id"), ("judge_input", "events"),
    ("unexpected_field",)]


@given(st.sampled_from(FIELD_PATHS), json_values, st.booleans())
def test_a_valid_row_with_one_field_replaced_gives_a_line_result(
        path: tuple[str, ...], value: object, ascii_only: bool) -> None:
    original = make_row()
    row = _replace(original, path, value)
    result = verify_fixture_line(json.dumps(row, ensure_ascii=ascii_only).encode(), 3)
    assert_well_formed(result, 3)
    assert_row_is_consistent(result)
    if path[0] == "judge_input" and row["judge_input"] != original["judge_input"]:
        assert result.row is None  # the hash no longer matches, or the shape is wrong


@given(st.lists(jcs_values.filter(lambda v: not isinstance(v, dict))
                | st.dictionaries(st.sampled_from(["type", "text", "input"]), jcs_values),
                max_size=4))
def test_any_events_with_a_recomputed_hash_give_a_line_result(events: list[Any]) -> None:
    # A row whose hash is right for hostile events: only the shape rules can object.
    judge_input = {"conversation_id": "conv_01JD8ZQ4R5", "events": events}
    row = make_row(judge_input=judge_input)
    result = verify_fixture_line(json.dumps(row).encode(), 1)
    assert_well_formed(result, 1)
    shaped = all(isinstance(e, dict) and isinstance(e.get("type"), str) for e in events)
    codes = {r.code for r in result.rejections}
    assert (result.row is not None) == shaped, codes


# --- whole files ------------------------------------------------------------------------

def _layout(row: dict[str, Any], style: int) -> bytes:
    """The same row in one of several textual layouts (both id-reading paths are hit)."""
    if style == 0:
        return json.dumps(row, ensure_ascii=False).encode()
    if style == 1:
        return json.dumps(row, separators=(",", ":")).encode()
    if style == 2:
        return json.dumps(dict(reversed(list(row.items())))).encode()
    return json.dumps(row, indent=None, ensure_ascii=True).replace('"conv', '"\\u0063onv').encode()


file_lines = st.one_of(
    st.tuples(st.just("row"), st.sampled_from(["conv_a", "conv_b", "conv_c", "conv_d"]),
              st.integers(0, 3), st.sampled_from(["pass", "fail", None])),
    st.tuples(st.just("blank"), st.sampled_from([b"", b"  ", b"\t", b"\r"])),
    st.tuples(st.just("bytes"), st.binary(max_size=40).filter(lambda b: b"\n" not in b)),
)


@given(st.lists(file_lines, max_size=12), st.sampled_from([b"\n", b"\r\n"]), st.booleans())
def test_a_file_gets_one_final_result_per_line(tmp_path_factory: pytest.TempPathFactory,
                                              lines: list[tuple[Any, ...]], ending: bytes,
                                              final_newline: bool) -> None:
    encoded: list[bytes] = []
    ids: dict[int, str] = {}
    for number, (kind, *args) in enumerate(lines, start=1):
        if kind == "row":
            conversation_id, style, expected = args
            encoded.append(_layout(make_row(conversation_id, expected=expected), style))
            ids[number] = conversation_id
        else:
            encoded.append(args[0])
            try:  # random bytes may happen to be a row too
                parsed = json.loads(args[0])
                source = parsed.get("source") if isinstance(parsed, dict) else None
                if isinstance(source, dict) and isinstance(source.get("conversation_id"), str):
                    ids[number] = source["conversation_id"]
            except ValueError:
                pass
    path = Path(tmp_path_factory.mktemp("calibration")) / "j.calibration.jsonl"
    content = b"".join(data + ending for data in encoded)
    if not final_newline and encoded and encoded[-1]:
        content = content[:-len(ending)]  # an empty last line only exists with its newline
    path.write_bytes(content)

    results = list(verify_calibration_file(path))
    # Every line is covered by exactly one result, in order: its own, or the one result
    # of a JSON object spread over several lines (from its first line to its end_line).
    covered = [number for r in results for number in range(r.line, r.end_line + 1)]
    assert covered == list(range(1, len(lines) + 1))
    by_line = {r.line: r for r in results}
    for result in results:
        assert_well_formed(result, result.line)
        assert_row_is_consistent(result)
    duplicated = {n for n, cid in ids.items() if list(ids.values()).count(cid) > 1}
    flagged = {r.line for r in results
               if any(x.code == "fixture-duplicate-conversation" for x in r.rejections)}
    assert flagged == duplicated
    for number, (kind, *_) in enumerate(lines, start=1):
        if kind == "blank" and number in by_line:  # not inside a spread object
            assert [x.code for x in by_line[number].rejections] == ["fixture-blank-line"]
        if kind == "row":  # a whole row is never swallowed by a spread one before it
            assert number in by_line


# JSON may spell a lone surrogate ("\ud800"); messages quoting such values must stay
# printable, or `introspection check` and eval reports would die printing them.
@pytest.mark.parametrize("field", ["expected", "split", "bogus\\ud800"])
def test_lone_surrogate_in_a_shown_value_is_printable(field: str) -> None:
    row = make_row()
    row.pop(field, None)
    text = json.dumps(row)[:-1] + f', "{field}": "x\\ud800"}}'  # JSON text, escape kept
    result = verify_fixture_line(text.encode(), 1)
    assert result.rejections
    for rejection in result.rejections:
        rejection.message.encode("utf-8")
