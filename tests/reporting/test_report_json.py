"""The JSON report's text: orjson's, with the layout and values the standard library gave."""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from introspection_cli.reporting.model import report_json

SCALARS = (st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1)
           | st.text(st.characters(codec="utf-8"), max_size=10))
FLOATS = st.floats(allow_nan=False, allow_infinity=False)


def reports(leaves: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    values = st.recursive(leaves, lambda inner: st.lists(inner, max_size=3)
                          | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                          max_leaves=12)
    return st.dictionaries(st.text(max_size=5), values, max_size=4)


def stdlib(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


@given(reports(SCALARS))
def test_without_floats_the_text_is_the_standard_librarys(report: dict[str, Any]) -> None:
    assert report_json(report) == stdlib(report)


@given(reports(SCALARS | FLOATS))
def test_floats_read_back_exactly_in_the_same_layout(report: dict[str, Any]) -> None:
    text = report_json(report)
    assert json.loads(text) == report
    assert text.count("\n") == stdlib(report).count("\n")


def test_what_orjson_refuses_goes_through_the_standard_library() -> None:
    for report in ({"n": 2**64}, {"s": "\ud800"}, {"n": [1, {"m": -2**70}]}):
        assert report_json(report) == stdlib(report)
    assert json.loads(report_json({"f": [0.1, 3e-05, 1e16, -0.0, math.pi]})) == {
        "f": [0.1, 3e-05, 1e16, -0.0, math.pi]}
