"""Majority vote over samples: error samples never vote; ties and all-errors are errors."""

from __future__ import annotations

import pytest

from introspection_cli.evaluation.verdict import ParsedVerdict
from introspection_cli.evaluation.voting import SampleResult, decide


def s(verdict: str | None) -> SampleResult:
    if verdict is None:
        return SampleResult(None, "bad reply")
    return SampleResult(ParsedVerdict(verdict, f"because {verdict}"))  # type: ignore[arg-type]


@pytest.mark.parametrize(("samples", "outcome", "unstable"), [
    (["pass"], "pass", False),
    (["fail", "fail", "fail"], "fail", False),
    (["pass", "fail", "pass"], "pass", True),
    (["pass", None, None], "pass", False),  # one answer, two errors: the answer wins
    (["pass", "fail", None], "error", True),  # tie among the answers
    (["pass", "fail"], "error", True),
    (["pass", "fail", "not_applicable"], "error", True),
    ([None], "error", False),
    ([None, None, None], "error", False),
])
def test_decide(samples: list[str | None], outcome: str, unstable: bool) -> None:
    decision = decide([s(v) for v in samples])
    assert (decision.outcome, decision.unstable) == (outcome, unstable)
    if outcome == "error":
        assert decision.error and decision.reasoning is None
    else:
        assert decision.reasoning == f"because {outcome}" and decision.error is None


def test_tie_says_no_majority_with_the_tally() -> None:
    decision = decide([s("pass"), s("fail"), s(None)])
    assert decision.error == "no majority: 1 fail, 1 pass, 1 error"


def test_all_errors_keeps_the_first_reason() -> None:
    assert decide([s(None), s(None)]).error == "all 2 samples failed; first: bad reply"
    assert decide([s(None)]).error == "bad reply"
