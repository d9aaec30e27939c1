"""Values a judge run produces, shared by the runner, the metrics and the reporters."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

Verdict = Literal["pass", "fail", "not_applicable"]
Outcome = Literal["pass", "fail", "not_applicable", "gated", "error"]

VERDICTS: tuple[Verdict, ...] = ("pass", "fail", "not_applicable")
OUTCOMES: tuple[Outcome, ...] = ("pass", "fail", "not_applicable", "gated", "error")
#: Report splits, in report order; ``unsplit`` holds rows whose split is null.
SPLITS: tuple[str, ...] = ("train", "dev", "test", "unsplit", "all")


class Tokens(NamedTuple):
    """The tokens one reply (or a row's replies) used, as the provider counted them.

    ``input`` counts every input token, of which ``cached_input`` were read from the
    provider's prompt cache and ``cache_write`` written to it. A named tuple rather
    than a dataclass: a re-run reads one per cached row from the verdict cache, and
    building a tuple costs half as much.
    """

    input: int
    output: int
    cached_input: int = 0
    cache_write: int = 0

    def as_usage(self) -> dict[str, int]:
        """The counts under a report's usage names (what a price table prices)."""
        return {"input_tokens": self.input, "output_tokens": self.output,
                "cached_input_tokens": self.cached_input,
                "cache_write_tokens": self.cache_write}


#: What a row that called no model needs.
NO_TOKENS = Tokens(0, 0)


def total_tokens(counts: Iterable[Tokens | None]) -> Tokens | None:
    """The sum of ``counts``; None when one of them is unknown."""
    totals = [0, 0, 0, 0]
    for count in counts:
        if count is None:
            return None
        for index, value in enumerate(count):
            totals[index] += value
    return Tokens(*totals)


class RowOutcome(NamedTuple):
    """What happened to one labelled calibration row.

    A named tuple rather than a frozen dataclass, as immutable: one is built per row
    of every run (a cached re-run of 4,000 rows builds nothing else per row), and a
    frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``,
    which makes it four times as slow to build.
    """

    line: int
    conversation_id: str
    split: str | None  # "train" | "dev" | "test" | None
    expected: Verdict
    outcome: Outcome
    samples: tuple[Outcome, ...] = ()  # one per sample: a verdict or "error"; () when gated
    unstable: bool = False
    reasoning: str | None = None
    error: str | None = None
    cached: bool = False
    #: The row's snapshot_hash: says which conversation text this outcome is about.
    snapshot_hash: str | None = None
    #: The tokens the row's replies used, whether they came now or from the verdict
    #: cache; None when a cached reply's were not recorded (a cache from before) or
    #: not read (a run that reports no model comparison does not read them).
    tokens: Tokens | None = NO_TOKENS


@dataclass(frozen=True, slots=True)
class RejectedRow:
    """A calibration row excluded from metrics, with its SPEC §2.3 code."""

    line: int
    code: str
    message: str


@dataclass(slots=True)
class Usage:
    """What a run cost and how it went with the provider.

    ``input_tokens`` counts every input token, of which ``cached_input_tokens`` were
    read from the provider's prompt cache and ``cache_write_tokens`` written to it.
    ``rate_limited`` counts 429 answers; ``concurrency`` is where the number of calls
    in flight settled (the lowest over providers; ``None`` when nothing was sent).
    """

    requests: int = 0
    cached: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    rate_limited: int = 0
    concurrency: int | None = None
    #: Of ``requests``, those answered through a provider's batch API (``--batch``):
    #: the provider bills their tokens at its batch discount.
    batch_requests: int = 0


@dataclass(frozen=True, slots=True)
class JudgeRun:
    name: str
    provider: str
    model: str
    rows: tuple[RowOutcome, ...]
    rejected: tuple[RejectedRow, ...] = ()
    #: The judge version that ran (:mod:`~introspection_cli.evaluation.fingerprint`).
    fingerprint: str | None = None
    #: Labelled ``test`` rows left out because the test split is held out; None when
    #: the run evaluated the test split.
    held_out: int | None = None
    #: What this judge's requests with this model used (the run's ``usage`` adds them up).
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True)
class EvalRun:
    recipe: str
    judges: tuple[JudgeRun, ...]
    usage: Usage = field(default_factory=Usage)
    #: Calls per row (``--samples``): with one, no row can be unstable.
    samples: int = 1
