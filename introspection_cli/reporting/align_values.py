"""What ``judges align`` hands its renderers: a run with the judge file's diff and what was
written, and a dry run's estimates.

Values beside :mod:`.outputs` (apart from them, so that certify never loads the align
code): :mod:`~introspection_cli.workflows.align` builds them, :mod:`.render_align`
prints their text; their JSON is their document.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from introspection_cli.alignment.results import ALIGN_VERSION, AlignRun
from introspection_cli.alignment.spend import Estimate


@dataclass(frozen=True)
class AlignOutput:
    """A run of ``judges align``: the run, the recipe as given, the judge file's unified diff
    with the final rubric, whether it was written, and the closing lines (the last one the
    next step)."""

    run: AlignRun
    recipe: str
    file_diff: str
    written: bool
    footer: tuple[str, ...]

    def as_json(self) -> dict[str, Any]:
        return {"align_version": ALIGN_VERSION, "recipe": self.recipe, **self.run.as_json(),
                "file_diff": self.file_diff, "written": self.written,
                "next_step": self.footer[-1]}


@dataclass(frozen=True)
class AlignDryRun:
    """``judges align --dry-run``: the rows, the rounds, and the estimates of evaluating the
    current rubric, of one optimizer call and of evaluating one candidate."""

    judge: str
    rows: Mapping[str, int]
    rounds: int
    start: Estimate
    optimizer: Estimate
    candidate: Estimate

    @property
    def at_most(self) -> Estimate:
        """Every call of a run of all its rounds."""
        return self.start + (self.optimizer + self.candidate).times(self.rounds)

    def as_json(self) -> dict[str, Any]:
        return {"align_version": ALIGN_VERSION, "dry_run": True, "judge": self.judge,
                "rows": dict(self.rows), "rounds": self.rounds,
                "estimates": {name: asdict(value) for name, value in (
                    ("start", self.start), ("optimizer_call", self.optimizer),
                    ("candidate_evaluation", self.candidate), ("at_most", self.at_most))}}
