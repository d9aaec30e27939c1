"""Planning an eval run: which judges, which rows, which gate decisions, which requests.

Everything here is decided before any model call, so a missing API key or an
unknown judge stops the run before it costs anything, and the cache can be
consulted to know which providers will be called at all.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from introspection_cli.errors import UsageError
from introspection_cli.evaluation.gate import GateResult, GateTimeout, evaluate_gate
from introspection_cli.evaluation.outcomes import RejectedRow, Verdict
from introspection_cli.evaluation.providers import TAKES_TEMPERATURE, ModelRequest
from introspection_cli.evaluation.verdict import (
    VERDICT_TOOL_DESCRIPTION,
    VERDICT_TOOL_NAME,
    VERDICT_TOOL_SCHEMA,
)
from introspection_cli.gcpause import collector_paused
from introspection_cli.recipe.model import Judge
from introspection_cli.recipe.selection import load_valid_recipe as load_valid_recipe
from introspection_cli.recipe.selection import select_judges as select_judges

if TYPE_CHECKING:  # Jinja2 is imported only by a run that renders a prompt
    from introspection_cli.evaluation.prompts.render import JudgePrompt
    from introspection_cli.fixture import FixtureRow

#: Values ``--split`` accepts; ``unsplit`` selects rows whose split is null.
SELECTABLE_SPLITS = ("train", "dev", "test", "unsplit")


class PlannedRow(NamedTuple):
    """A labelled row and what will happen to it: gated, a gate error, or a model call.

    A row that calls the model keeps what its prompt is rendered from: the
    verified line its ``judge_input`` is read back from (a line's bytes are a
    tenth of its parsed tree, and a re-run whose verdicts are all cached never
    reads them) and the gate's matches. :meth:`JudgePlan.request_for` renders it
    when the runner gets to the row, so the first calls go out while later rows
    are still being rendered.
    """

    line: int
    conversation_id: str
    split: str | None
    expected: Verdict
    gate_error: str | None = None
    gated: bool = False
    #: The verified line (:attr:`~introspection_cli.fixture.FixtureRow.text`).
    text: bytes | None = None
    gate: GateResult | None = None
    snapshot_hash: str | None = None  # which conversation text the row holds

    @property
    def calls_model(self) -> bool:
        return self.text is not None


@dataclass(frozen=True, eq=False)
class JudgePlan:
    """One judge with one model over its planned rows: a unit of one run.

    Compared (and hashed) by identity, so a run can key its state by plan: two plans
    of the same judge and model (``--model m --model m``) are two runs of it, and
    hashing a plan never walks its rows.
    """

    judge: Judge
    provider: str
    model: str
    rows: tuple[PlannedRow, ...]
    rejected: tuple[RejectedRow, ...] = field(default_factory=tuple)
    #: Labelled ``test`` rows not evaluated (held out); None when ``test`` is selected.
    held_out: int | None = None

    @functools.cached_property
    def _prompt(self) -> JudgePrompt:
        # Imported here: Jinja2 is loaded only by a run that renders a prompt.
        from introspection_cli.evaluation.prompts.render import JudgePrompt

        return JudgePrompt(self.judge)

    @functools.cached_property
    def template(self) -> ModelRequest:
        """Everything of this judge's requests that is the same for every row: all but
        the user message (left empty)."""
        return replace(request_template(self.judge, self.provider, self.model),
                       system=self._prompt.system)

    def request_for(self, row: PlannedRow) -> ModelRequest:
        """The exact request for a row that calls the model."""
        from introspection_cli.fixture import judge_input_of

        if row.text is None or row.gate is None:
            raise ValueError(f"row {row.line} makes no model call")
        prompt = self._prompt.render(judge_input_of(row.text), row.gate)
        return replace(self.template, user=prompt.user, user_prefix_length=prompt.prefix_length)

    @property
    def ignored_temperature(self) -> str | None:
        """Why the judge's ``llm.temperature`` is not sent, or ``None`` when it is (or unset)."""
        temperature = self.judge.llm.temperature
        if temperature is None or self.provider in TAKES_TEMPERATURE:
            return None
        return (f"judge {self.judge.name} sets llm.temperature {temperature:g}, which the "
                f"{self.provider} provider does not send (its API takes no sampling "
                "parameters); it has no effect on this run")


def plan_judge(judge: Judge, *, splits: Sequence[str], provider: str | None,
               model: str | None, regex_timeout: float) -> JudgePlan:
    """Read ``judge``'s calibration file and decide every labelled row's fate.

    Verification and gates run here, for every row, before any call: a row the
    fixture rules reject (a duplicate conversation is only known at the end of
    the file) must never cost a call. Prompts are rendered later, per row.
    """
    from introspection_cli.fixture import verify_calibration_file
    from introspection_cli.fixture.codes import BLANK_LINE  # a blank line is not a row

    chosen_provider = provider or judge.llm.provider
    chosen_model = model or judge.llm.model
    rows: list[PlannedRow] = []
    rejected: list[RejectedRow] = []
    held_out = 0
    with collector_paused(freeze=True):  # the rows live for the run: nothing to collect
        for result in verify_calibration_file(judge.calibration_path):
            rejections = [r for r in result.rejections if r.code != BLANK_LINE]
            if rejections or result.row is None:
                # In eval every rejection, an unlabelled row included, excludes the row.
                rejected += [RejectedRow(r.line, r.code, r.message) for r in rejections]
                continue
            row = result.row
            if splits and (row.split or "unsplit") not in splits:
                held_out += row.split == "test"
                continue
            rows.append(_plan_row(judge, row, cast(Verdict, row.expected), regex_timeout,
                                  row.snapshot_hash))
    return JudgePlan(judge, chosen_provider, chosen_model, tuple(rows), tuple(rejected),
                     held_out=None if not splits or "test" in splits else held_out)


def plan_unlabelled(judge: Judge, rows_file: Path, *, provider: str | None, model: str | None,
                    regex_timeout: float) -> JudgePlan:
    """Plan ``judge`` over the rows of ``rows_file`` whatever their labels (``judges estimate``).

    The rows are verified like calibration rows, except that a missing label is
    not a fault: these are production conversations nobody labelled. Their
    ``expected`` is a stand-in (``not_applicable``) that nothing scores.
    """
    plan, _ = plan_production(judge, rows_file, provider=provider, model=model,
                              regex_timeout=regex_timeout)
    return plan


def plan_production(judge: Judge, rows_file: Path, *, provider: str | None, model: str | None,
                    regex_timeout: float) -> tuple[JudgePlan, dict[int, FixtureRow]]:
    """:func:`plan_unlabelled`, and the verified rows by line (``judges estimate --design
    random`` reads the labels some of them have, and the field a segment is keyed on)."""
    from introspection_cli.fixture import verify_calibration_file
    from introspection_cli.fixture.codes import BLANK_LINE, UNLABELLED

    rows: list[PlannedRow] = []
    rejected: list[RejectedRow] = []
    verified: dict[int, FixtureRow] = {}
    for result in verify_calibration_file(rows_file):
        rejections = [r for r in result.rejections if r.code not in (BLANK_LINE, UNLABELLED)]
        if rejections or result.row is None:
            rejected += [RejectedRow(r.line, r.code, r.message) for r in rejections]
            continue
        row = result.row
        verified[row.line] = row
        rows.append(_plan_row(judge, row, "not_applicable", regex_timeout))
    plan = JudgePlan(judge, provider or judge.llm.provider, model or judge.llm.model,
                     tuple(rows), tuple(rejected))
    return plan, verified


def _plan_row(judge: Judge, row: FixtureRow, expected: Verdict, regex_timeout: float,
              snapshot_hash: str | None = None) -> PlannedRow:
    line, conversation_id, split = row.line, row.conversation_id, row.split
    events = row.judge_input.get("events")
    try:
        gate = evaluate_gate(judge.gate, events if isinstance(events, list) else [],
                             timeout=regex_timeout)
    except GateTimeout as exc:
        return PlannedRow(line, conversation_id, split, expected, gate_error=str(exc),
                          snapshot_hash=snapshot_hash)
    if not gate.applies:
        return PlannedRow(line, conversation_id, split, expected, gated=True,
                          snapshot_hash=snapshot_hash)
    return PlannedRow(line, conversation_id, split, expected, text=row.text, gate=gate,
                      snapshot_hash=snapshot_hash)


def build_request(judge: Judge, provider: str, model: str, judge_input: Mapping[str, Any],
                  gate: GateResult) -> ModelRequest:
    """The exact request for one row: rendered messages, the verdict tool, the llm params.

    The temperature is left out for a provider that does not take one, so the cache
    key and ``judges render`` describe what is actually sent.
    """
    from introspection_cli.evaluation.prompts.render import JudgePrompt

    prompt = JudgePrompt(judge).render(judge_input, gate)
    return replace(request_template(judge, provider, model), system=prompt.system,
                   user=prompt.user, user_prefix_length=prompt.prefix_length)


def request_template(judge: Judge, provider: str, model: str) -> ModelRequest:
    """The parts of ``judge``'s requests that do not depend on the row (empty messages)."""
    return ModelRequest(
        model=model,
        system="",
        user="",
        tool_name=VERDICT_TOOL_NAME,
        tool_description=VERDICT_TOOL_DESCRIPTION,
        tool_schema=VERDICT_TOOL_SCHEMA,
        temperature=judge.llm.temperature if provider in TAKES_TEMPERATURE else None,
        max_output_tokens=judge.llm.max_output_tokens,
    )


def check_splits(splits: Iterable[str]) -> tuple[str, ...]:
    """Validate ``--split`` values (UsageError naming the allowed ones)."""
    chosen = tuple(dict.fromkeys(splits))
    bad = [split for split in chosen if split not in SELECTABLE_SPLITS]
    if bad:
        raise UsageError(f"unknown split {', '.join(bad)}: use one of "
                         f"{', '.join(SELECTABLE_SPLITS)}")
    return chosen
