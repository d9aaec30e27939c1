"""What an align run found: per-split figures, each round, and the run, as values with JSON."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from introspection_cli.alignment.keep_rules import (
    DevComparison,
    RuleCheck,
    agrees,
    applicable_agreement,
)
from introspection_cli.evaluation.outcomes import RowOutcome
from introspection_cli.statistics import Interval, wilson_interval

#: The ``align_version`` of the JSON output.
ALIGN_VERSION = 1


def _interval(interval: Interval | None) -> dict[str, float] | None:
    return None if interval is None else interval.as_json()


@dataclass(frozen=True, slots=True)
class SplitFigures:
    """One rubric's figures on one split's rows."""

    rows: int
    errors: int
    disagreements: int
    applicable_agreement: Interval | None
    tpr: Interval | None
    tnr: Interval | None

    def as_json(self) -> dict[str, Any]:
        return {"rows": self.rows, "errors": self.errors, "disagreements": self.disagreements,
                "applicable_agreement": _interval(self.applicable_agreement),
                "tpr": _interval(self.tpr), "tnr": _interval(self.tnr)}


def figures(rows: Sequence[RowOutcome]) -> SplitFigures:
    """:class:`SplitFigures` of ``rows`` (errors left out of every rate)."""
    scored = [row for row in rows if row.outcome != "error"]

    def rate(label: str) -> Interval | None:
        labelled = [row for row in scored if row.expected == label]
        return wilson_interval(sum(row.outcome == label for row in labelled), len(labelled))

    return SplitFigures(len(rows), len(rows) - len(scored),
                        sum(not agrees(row.expected, row.outcome) for row in scored),
                        applicable_agreement(scored), rate("pass"), rate("fail"))


def rubric_diff(before: str, after: str, *, old: str = "current rubric",
                new: str = "candidate") -> str:
    """A unified diff of two rubrics (empty when they are equal)."""
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), old, new, lineterm="")
    return "\n".join(lines) + "\n" if before != after else ""


@dataclass(frozen=True)
class RoundResult:
    """One round: the candidate, and whether it was kept and why.

    ``candidate`` is None when the optimizer gave no usable edit (``note`` says
    why); ``dev`` is None when the candidate was refused before evaluation
    (``refused_by`` then holds that one check).
    """

    number: int
    note: str
    rationale: str | None = None
    candidate: str | None = None
    diff: str = ""
    checks: tuple[RuleCheck, ...] = ()
    refused_by: tuple[RuleCheck, ...] = ()
    dev: DevComparison | None = None
    dev_figures: SplitFigures | None = None
    train_figures: SplitFigures | None = None
    kept: bool = False
    cost: float | None = None

    def as_json(self) -> dict[str, Any]:
        return {"round": self.number, "kept": self.kept, "note": self.note,
                "rationale": self.rationale, "candidate": self.candidate, "diff": self.diff,
                "evaluated": self.dev is not None,
                "checks": [check.as_json() for check in self.checks],
                "refused_by": [check.rule for check in self.refused_by],
                "dev": None if self.dev is None else self.dev.as_json(),
                "dev_figures": None if self.dev_figures is None else self.dev_figures.as_json(),
                "train_figures": (None if self.train_figures is None
                                  else self.train_figures.as_json()),
                "cost": self.cost}


@dataclass(frozen=True)
class Spend:
    """What the run cost: tokens, and US dollars when every model has a price."""

    optimizer_calls: int = 0
    judge_requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = 0.0
    limit: float | None = None

    def as_json(self) -> dict[str, Any]:
        return {"optimizer_calls": self.optimizer_calls, "judge_requests": self.judge_requests,
                "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cost": self.cost, "max_cost": self.limit}


@dataclass(frozen=True)
class AlignRun:
    """A whole run: where it started, every round, where it ended."""

    judge: str
    judge_model: tuple[str, str]
    optimizer_model: tuple[str, str]
    rows: dict[str, int]
    start_instructions: str
    final_instructions: str
    start: dict[str, SplitFigures]
    final: dict[str, SplitFigures]
    rounds: tuple[RoundResult, ...]
    stopped: str
    spend: Spend
    warnings: tuple[str, ...] = field(default_factory=tuple)

    @property
    def kept(self) -> tuple[int, ...]:
        return tuple(result.number for result in self.rounds if result.kept)

    def as_json(self) -> dict[str, Any]:
        return {"judge": self.judge,
                "judge_model": {"provider": self.judge_model[0], "model": self.judge_model[1]},
                "optimizer": {"provider": self.optimizer_model[0],
                              "model": self.optimizer_model[1]},
                "rows": dict(self.rows),
                "start": {split: value.as_json() for split, value in self.start.items()},
                "final": {split: value.as_json() for split, value in self.final.items()},
                "rounds": [result.as_json() for result in self.rounds],
                "kept_rounds": list(self.kept), "stopped": self.stopped,
                "instructions": {"before": self.start_instructions,
                                 "after": self.final_instructions,
                                 "changed": self.final_instructions != self.start_instructions},
                "usage": self.spend.as_json()}
