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
    MAX_COST,
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


def test_the_cost_is_shared_by_the_literals_of_one_file() -> None:
    budget = RegexBudget()
    # "a{n}" costs n + 1 units: one a, and n copies
    assert not isinstance(parse_value(f"/a{{{MAX_COST - 102}}}/", budget), LiteralError)
    assert not isinstance(parse_value("/b{99}/", budget), LiteralError)  # exactly the limit
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


#: Gate patterns people write: each compiles in a few milliseconds at most.
_PRODUCTS = ["Alpha Pro", "Beta Max", "Gamma Lite", "Delta One", "Epsilon", "Zeta X", "Eta Plus",
             "Theta 2", "Iota Mini", "Kappa S", "Lambda", "Mu Air", "Nu Go", "Xi Edge", "Omicron",
             "Pi Home", "Rho Pad", "Sigma Book", "Tau Watch", "Upsilon TV", "Phi Buds", "Chi Cam",
             "Psi Drive", "Omega Hub", "Nova", "Orion", "Vega", "Lyra", "Atlas", "Titan", "Apollo",
             "Hermes", "Zeus", "Hera", "Athena", "Ares", "Artemis", "Demeter", "Hestia",
             "Poseidon", "Hades", "Dionysus", "Persephone", "Eros", "Nike", "Iris", "Helios",
             "Selene", "Eos", "Gaia"]
REALISTIC = [
    r"/\d{4}-\d{2}-\d{2}/", r"/(?:[A-Z]{2}\d{6}){1,3}/", "/.{0,5000}/s", "/[a-f0-9]{64}/i",
    "/a{5000}/", r"/^[\s\S]{5001,}/", r"/(?:\S+\s+){1000,}/", r"/[\s\S]{20000,}/",
    r"/[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]{1,255}/", r"/[\w.+-]+@[\w-]+\.[\w.-]+/i",
    r"/https?:\/\/(?:www\.)?[-a-zA-Z0-9@:%._\+~#=]{1,256}\.[a-zA-Z0-9()]{1,6}\b"
    r"(?:[-a-zA-Z0-9()@:%_\+.~#?&\/=]*)/",
    r"/\b\d{1,3}(\.\d{1,3}){3}\b/",
    r"/\b(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}\b/",
    r"/\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2}))?/",
    r"/\w{1,100}/", r"/\p{L}{2,40}/", r"/[\u4e00-\u9fff]{2,}/", "/(?:" + "|".join(_PRODUCTS) + ")/i",
    "/(?i)(?:" + "|".join(_PRODUCTS) + ")/",
    "/(?x) ^ \\s* (?: refund | return ) \\s+ (?# kind ) request  # comment\n  \\b ORD - \\d{6,10} \\b/",
    r"/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i",
    r"/\+?\d{1,3}[-.\s]?\(?\d{3}\)?[-.\s]?\d{3}[-.\s]?\d{4}/",
    r"/(?:\b\w+\b[\s,]+){20,}/", r"/\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+){1,3}\b/",
    r"/(?fi)stra(?:ß|ss)e\w{0,20}/", r"/(?fi)[\p{L}\p{N}]{1,40}/", r"/(?i)[\p{L}\p{N}]{2,200}/",
]


@pytest.mark.parametrize("raw", [*REALISTIC, r"/[\s\S]{50000,}/"])
def test_realistic_patterns_stay_valid(raw: str) -> None:
    assert not isinstance(parse_value(raw), LiteralError)


def test_realistic_patterns_share_a_file() -> None:
    budget = RegexBudget()
    for raw in [*REALISTIC, "/^.{3000,}/s", "/^.{2500,}/s"]:  # [\s\S]{50000,} is 100,000 units
        assert not isinstance(parse_value(raw, budget), LiteralError), raw


def test_a_long_alternation_split_across_matchers_fits_one_file() -> None:
    names = [f"customer-name-{index:04d}" for index in range(2000)]
    budget = RegexBudget()
    for start in range(0, len(names), 250):  # 250 names a matcher: under 10,000 characters
        raw = "/(?i)\\b(?:" + "|".join(names[start:start + 250]) + ")\\b/"
        assert not isinstance(parse_value(raw, budget), LiteralError)


#: What the audit found too costly, the part of the pattern that makes it so, and the words
#: the message names it with.
COSTLY = [
    ("/(?fi)" + "[ß-ﬃ]" * 1999 + "/", "full case folding"),    # no repeat: 1.2 s, 180 MB
    ("/(?fi)[ß-ﬃ]{4999}/", "full case folding"),               # 0.2 s, 177 MB
    (r"/(?V1i)[\p{L}\p{N}]{5000}/", "full case folding"),      # V1 folds fully with i
    ("/" + "\\g<\\g‹…" * 1000 + "/", "unclosed \\g< references"),  # 1 s to parse
    (r"/(?:a{10000}){10000}/", "repeat counts"),
    (r"/\X{100000}/", "repeat counts"),
]


@pytest.mark.parametrize(("raw", "cause"), COSTLY)
def test_costly_patterns_name_their_cause(raw: str, cause: str) -> None:
    refused = parse_value(raw)
    assert isinstance(refused, LiteralError) and refused.code == "invalid-regex"
    assert cause in refused.message
    assert "\n" not in refused.message


def test_costly_patterns_are_refused_fast_in_bounded_memory(tmp_path: Path) -> None:
    # the audit's 1 MB judge file: 64 matchers of 1,999 folded sets each took 87 s (30 here:
    # the harness writes them JSON-escaped, and a judge file may have at most 1 MiB)
    folded = "/(?fi)" + "[ß-ﬃ]" * 1999 + "/"
    write_recipe(tmp_path, [[folded] * 30, [raw for raw, _ in COSTLY]])
    outcome, diagnostics = check_measured(tmp_path)
    assert outcome.returncode == 1
    assert {d["code"] for d in diagnostics} == {"invalid-regex"}
    assert outcome.seconds < 5 and outcome.peak_mb < 200, outcome


def test_eval_keeps_compiled_gates_within_a_cost_bound() -> None:
    # judges eval compiles each gate pattern once and keeps it; the audit's 8 judges with
    # costly gates held 1.1 GB through an lru_cache of 256 patterns and regex's own cache
    from introspection_cli.evaluation import gate

    for index in range(12):  # twelve judge files' worth, each pattern just under the limit
        assert gate._compile(f"x{index}a{{{MAX_COST - 10}}}", "") is not None
    assert gate._cache_cost <= gate._CACHE_COST
    assert len(gate._cache) <= gate._CACHE_COST // (MAX_COST - 10)
    newest = f"x11a{{{MAX_COST - 10}}}"
    assert (newest, "") in gate._cache  # the most recent stays
