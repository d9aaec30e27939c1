"""Regex literals cannot make ``check`` hang or exhaust memory (docs/rules.md, regex size limits).

Every run is the real CLI in a child process through the hostile suite's
harness: a wall-clock ceiling, an address-space cap, and the child's peak
resident memory. The patterns are nested counted repetitions in every syntax
``regex`` accepts (greedy, lazy, possessive, ``{m}``, ``{m,}``, ``{m,n}``,
verbose-mode spaces), the shapes whose compiled size multiplies.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from introspection_cli.recipe.regex_literal import (
    MAX_COPIES,
    MAX_PATTERN_LENGTH,
    LiteralError,
    RegexBudget,
    parse_value,
)
from tests.hostile.harness import Outcome, run_cli_measured

#: Seconds and megabytes a check of a small recipe stays well within, even on a busy machine.
SECONDS = 10.0
PEAK_MB = 300.0

JUDGE = """name: {name}
description: "Gated by generated patterns."
on:
{matchers}llm:
  provider: openai
  model: gpt-5.6-luna
instructions: |
  Return pass when the assistant answered, fail when it did not, and
  not_applicable when there is nothing to grade.
"""


def write_recipe(root: Path, patterns_per_judge: list[list[str]]) -> None:
    (root / "judges").mkdir(parents=True)
    (root / "SYSTEM.md").write_text("You are a test agent.\n")
    for index, patterns in enumerate(patterns_per_judge):
        matchers = "".join(f"  - event: message\n    match:\n      text: {json.dumps(p)}\n"
                           for p in patterns)
        name = f"judge-{index}"
        (root / "judges" / f"{name}.yaml").write_text(JUDGE.format(name=name, matchers=matchers))


def check_measured(root: Path) -> tuple[Outcome, list[dict[str, object]]]:
    outcome = run_cli_measured(["check", ".", "--format", "json"], root)
    assert outcome.returncode in (0, 1), outcome
    assert "Traceback" not in outcome.stderr
    assert outcome.seconds < SECONDS, outcome.seconds
    assert outcome.peak_mb < PEAK_MB, outcome.peak_mb
    return outcome, json.loads(outcome.stdout)["diagnostics"]


_counts = st.sampled_from([0, 1, 2, 3, 10, 99, 100, 1000, 9999, 10000, 65535, 4294967294])


@st.composite
def quantifiers(draw: st.DrawFn) -> str:
    low = draw(_counts)
    form = draw(st.sampled_from(["{m}", "{m,}", "{m,n}", "{,n}", "+", "*", "?"]))
    text = (form.replace("m", str(low)).replace("n", str(low + draw(st.sampled_from([0, 1, 9])))))
    return text + draw(st.sampled_from(["", "", "?", "+"]))  # greedy, lazy, possessive


@st.composite
def nested_patterns(draw: st.DrawFn) -> str:
    pattern = draw(st.sampled_from(["a", r"\w", "[a-z]", "(a)", r"\X", r"\R", "(?:ab|cd)", ".",
                                    r"[\p{L}\p{N}]|b"]))
    for _ in range(draw(st.integers(1, 8))):
        opener = draw(st.sampled_from(["(?:", "(", "(?>", "(?=", "(?i:"]))
        pattern = f"{opener}{pattern}){draw(quantifiers())}"
    if draw(st.booleans()):  # verbose mode: spaces inside the counts still count
        pattern = "(?x)" + pattern.replace("0", " 0")
    if draw(st.booleans()):  # full case folding: the costliest compile per copy measured
        pattern = "(?fi)" + pattern
    return f"/{pattern}/"


@settings(max_examples=12, deadline=None)
@given(st.lists(st.lists(nested_patterns(), min_size=1, max_size=3), min_size=1, max_size=6))
def test_nested_repetitions_are_checked_fast_in_bounded_memory(
        tmp_path_factory: pytest.TempPathFactory, patterns: list[list[str]]) -> None:
    root = tmp_path_factory.mktemp("recipe")
    write_recipe(root, patterns)
    _, diagnostics = check_measured(root)
    assert {d["code"] for d in diagnostics} <= {"invalid-regex"}
    assert all("too complex" in str(d["message"]) or "repeat" in str(d["message"])
               for d in diagnostics), diagnostics


@pytest.mark.parametrize("pattern", [
    "/(?:a{10000}){10000}/",                           # 24 GB and killed before the bound
    "/((((a{100}){100}){100}){100})/",                 # hung
    "/(?x)(?:a{1 0 0 0 0}){1 0 0 0 0}/",               # counts written with verbose spaces
    "/(?:a{1#\n0000}){10000}/x",                       # and with a comment inside
    "/" + "(" * 40 + "a" + ")+" * 40 + "/",            # + doubles each level: 2^40
    "/" + "(?:" * 25 + "a" + "){2}?" * 25 + "/",       # lazy {2}: 3^25
])
def test_audit_patterns_are_invalid_regex(tmp_path: Path, pattern: str) -> None:
    write_recipe(tmp_path, [[pattern]])
    outcome, diagnostics = check_measured(tmp_path)
    assert outcome.returncode == 1
    assert [(d["code"], d["line"]) for d in diagnostics] == [("invalid-regex", 6)]
    assert "too complex" in str(diagnostics[0]["message"])


def test_the_copies_are_shared_by_the_literals_of_one_file() -> None:
    budget = RegexBudget()
    assert not isinstance(parse_value(f"/a{{{MAX_COPIES - 100}}}/", budget), LiteralError)
    assert not isinstance(parse_value("/b{100}/", budget), LiteralError)  # exactly the limit
    third = parse_value("/c{1}d+/", budget)
    assert isinstance(third, LiteralError) and third.code == "invalid-regex"
    assert "together with this file's other regex literals" in third.message
    assert not isinstance(parse_value("/c{1}d+/"), LiteralError)  # alone it is fine


def test_a_long_pattern_is_refused_with_a_short_message() -> None:
    raw = "/" + "|".join(["word"] * MAX_PATTERN_LENGTH) + "/"
    refused = parse_value(raw)
    assert isinstance(refused, LiteralError) and refused.code == "invalid-regex"
    assert f"at most {MAX_PATTERN_LENGTH:,}" in refused.message
    assert len(refused.message) < 300


@pytest.mark.parametrize("raw", ["/\\d{4}-\\d{2}-\\d{2}/", "/(?:[A-Z]{2}\\d{6}){1,3}/",
                                 "/.{0,5000}/s", "/[a-f0-9]{64}/i", "/a{5000}/"])
def test_realistic_patterns_stay_valid(raw: str) -> None:
    assert not isinstance(parse_value(raw), LiteralError)
