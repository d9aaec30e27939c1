"""Reducing a row's samples to one outcome: majority vote over the samples that answered.

An error sample never counts as a vote. A row is ``unstable`` when its
answering samples disagree; a tie for the most votes (or no answering sample
at all) is an ``error`` outcome with the reason, never a guess.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from introspection_cli.evaluation.outcomes import NO_TOKENS, Outcome, Tokens, Verdict
from introspection_cli.evaluation.verdict import ParsedVerdict


class SampleResult(NamedTuple):
    """One call's result: a verdict, or the reason there is none. A named tuple, as
    :class:`~introspection_cli.evaluation.outcomes.RowOutcome` is: one per sample of
    every row."""

    verdict: ParsedVerdict | None
    error: str | None = None
    cached: bool = False
    service_failure: bool = False  # the provider failed after retries (vs. a bad reply)
    refused: bool = False  # the provider refused the request as wrong (a non-retryable 4xx)
    #: The tokens of a reply that gave no verdict (an unusable reply is paid for too).
    reply_tokens: Tokens = NO_TOKENS

    @property
    def tokens(self) -> Tokens | None:
        """The tokens the sample's reply used; None when a cached verdict's are unknown."""
        return self.verdict.tokens if self.verdict is not None else self.reply_tokens

    @property
    def outcome(self) -> Outcome:
        return "error" if self.verdict is None else self.verdict.verdict


@dataclass(frozen=True, slots=True)
class Decision:
    outcome: Outcome
    reasoning: str | None
    error: str | None
    unstable: bool


def decide(samples: Sequence[SampleResult]) -> Decision:
    """The majority verdict of ``samples``, or an error saying why there is none."""
    if len(samples) == 1 and samples[0].verdict is not None:  # one sample: its verdict
        only = samples[0].verdict
        return Decision(only.verdict, only.reasoning, None, unstable=False)
    answered = [s.verdict for s in samples if s.verdict is not None]
    votes: Counter[Verdict] = Counter(v.verdict for v in answered)
    unstable = len(votes) > 1
    if not votes:
        reasons = [s.error for s in samples if s.error]
        first = reasons[0] if reasons else "no sample answered"
        if len(samples) == 1:
            return Decision("error", None, first, unstable=False)
        return Decision("error", None, f"all {len(samples)} samples failed; first: {first}",
                        unstable=False)
    ranked = votes.most_common()
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return Decision("error", None, f"no majority: {_tally(votes, samples)}", unstable)
    winner = ranked[0][0]
    reasoning = next(v.reasoning for v in answered if v.verdict == winner)
    return Decision(winner, reasoning, None, unstable)


def _tally(votes: Counter[Verdict], samples: Sequence[SampleResult]) -> str:
    parts = [f"{count} {verdict}" for verdict, count in sorted(votes.items())]
    failed = sum(1 for s in samples if s.verdict is None)
    if failed:
        parts.append(f"{failed} error")
    return ", ".join(parts)
