"""``judges align`` end to end, minus the command line.

Checks everything that can fail cheaply before any call (flags, the recipe,
the calibration rows, prices for ``--max-cost``, that ``--write`` can rewrite
the judge file, the API keys), evaluates the current rubric on train and dev,
runs the rounds (:mod:`introspection_cli.alignment.session`), and prints what
happened; with ``--write`` the kept rubric replaces the judge file's
``instructions`` and nothing else.

Exit codes: 0 the rounds ran, whether or not a candidate was kept (the report
says which); 1 nothing to learn from or to measure on (no train or dev row, no
train disagreement, rejected rows), or ``--max-cost`` does not cover evaluating
the current rubric and one round; 2 usage or configuration (flags, a missing price with
``--max-cost``, a key, a refused request, a judge file ``--write`` cannot
rewrite); 3 a provider failed after retries.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from introspection_cli.alignment.inputs import CalibrationRows, read_rows
from introspection_cli.alignment.optimizer import Disagreement, proposal_request
from introspection_cli.alignment.results import (
    AlignRun,
    RoundResult,
    Spend,
    figures,
)
from introspection_cli.alignment.session import (
    NOTHING_LEFT,
    AlignPlan,
    AlignSession,
    Evaluated,
    Stop,
)
from introspection_cli.alignment.spend import Budget, Model, missing_prices, optimizer_estimate
from introspection_cli.alignment.yaml_block import (
    UnsupportedJudgeFile,
    replace_instructions,
    write_instructions,
)
from introspection_cli.errors import CommandResult, ConfigError, DataError, ExitCode, UsageError
from introspection_cli.evaluation.plan import load_valid_recipe
from introspection_cli.evaluation.providers import API_KEY_ENV
from introspection_cli.evaluation.runner import EvalOptions
from introspection_cli.pricing import PriceTable, load_prices
from introspection_cli.recipe.selection import named_judge
from introspection_cli.reporting.align_values import AlignDryRun, AlignOutput
from introspection_cli.reporting.registry import ReportKind, check_format, render

ALIGN_SPLITS = ("train", "dev")


@dataclass(frozen=True)
class AlignSettings:
    judge: str
    rounds: int = 5
    optimizer_model: str | None = None  # [PROVIDER:]MODEL; None: the judge's
    max_cost: float | None = None
    no_cost_limit: bool = False
    dry_run: bool = False
    write: bool = False
    fmt: str = "text"

    def check(self) -> None:
        if not self.judge:
            raise UsageError("judges align needs --judge NAME")
        if self.rounds < 1:
            raise UsageError("--rounds must be at least 1")
        check_format(ReportKind.ALIGN, self.fmt)
        if self.max_cost is not None and not (math.isfinite(self.max_cost)
                                              and self.max_cost >= 0):
            raise UsageError("--max-cost must be a number of US dollars, 0 or more")
        if self.max_cost is not None and self.no_cost_limit:
            raise UsageError("--max-cost and --no-cost-limit contradict each other; pass one")
        if not (self.dry_run or self.no_cost_limit or self.max_cost is not None):
            raise UsageError("judges align calls models in a loop: say what it may spend with "
                             "--max-cost USD (see --dry-run for an estimate), or pass "
                             "--no-cost-limit")


def optimizer_choice(value: str | None, judge_model: Model) -> Model:
    """``--optimizer-model`` as (provider, model): ``openai:``/``anthropic:`` set the
    provider, a bare name uses the judge's provider; absent, the judge's own model."""
    if value is None:
        return judge_model
    prefix, sep, name = value.partition(":")
    provider, model = (prefix, name) if sep and prefix in API_KEY_ENV else (judge_model[0],
                                                                            value)
    if not model.strip():
        raise UsageError(f"--optimizer-model {value!r} names no model; pass MODEL or "
                         "PROVIDER:MODEL")
    return provider, model


def align_judge(path: Path, options: EvalOptions, settings: AlignSettings, *,
                progress: Callable[[str], None] | None = None) -> CommandResult:
    """Run ``judges align`` on the recipe at ``path``; ``progress`` is told each slow step."""
    settings.check()
    recipe, warnings = load_valid_recipe(path, (settings.judge,))
    judge = named_judge(recipe, settings.judge)
    if not judge.calibration_path.is_file():
        raise DataError(f"judge {judge.name} has no calibration data: expected "
                        f"{judge.calibration_path}")
    judge_model: Model = (judge.llm.provider, judge.llm.model)
    optimizer = optimizer_choice(settings.optimizer_model, judge_model)
    prices = load_prices()
    if settings.max_cost is not None:
        _require_prices(prices, (judge_model, optimizer))
    original = judge.path.read_bytes()
    if settings.write:
        _check_writable(original, judge.path)
    rows = read_rows(judge.calibration_path)
    _require_rows(rows, judge.name)
    options = replace(options, judges=(judge.name,), splits=ALIGN_SPLITS)
    plan = AlignPlan(recipe, judge, options, judge_model, optimizer, settings.rounds,
                     rows.train_events, rows.guarded)
    budget = Budget(prices, settings.max_cost)
    session = AlignSession(plan, budget, progress=progress)
    counts = {"train": rows.labelled["train"], "dev": rows.labelled["dev"],
              "test": rows.labelled["test"]}
    if settings.dry_run:
        return _dry_run(session, counts, settings, warnings)
    _require_keys((judge_model, optimizer), session.environ)
    return _run(session, counts, settings, original, warnings)


def _require_prices(prices: PriceTable, models: tuple[Model, ...]) -> None:
    missing = missing_prices(prices, models)
    if missing:
        where = prices.source or "prices.toml in the config directory (or INTROSPECTION_PRICES)"
        raise ConfigError(f"--max-cost needs a price for {', '.join(missing)} in the price "
                          f"table ({where}); add one, or pass --no-cost-limit instead")


def _check_writable(original: bytes, path: Path) -> None:
    try:
        replace_instructions(original, "A rubric.\n", what=str(path))
    except UnsupportedJudgeFile as exc:
        raise UsageError(f"--write cannot be used: {exc}; run without --write and apply the "
                         "diff it prints by hand") from None


def _require_rows(rows: CalibrationRows, judge: str) -> None:
    for split, purpose in (("train", "learn from"), ("dev", "measure candidates on")):
        if not rows.labelled[split]:
            raise DataError(f"judge {judge} has no labelled {split} rows to {purpose}; "
                            "assign splits with `introspection judges split`")


def _require_keys(models: tuple[Model, ...], environ: Mapping[str, str]) -> None:
    for provider, _ in dict.fromkeys(models):
        variable = API_KEY_ENV[provider]
        if not environ.get(variable, "").strip():
            raise ConfigError(f"{variable} is not set, and judges align calls the {provider} "
                              f"provider; export {variable} (for a local compatible server "
                              "set its base URL variable and any non-empty key)")


def _dry_run(session: AlignSession, counts: dict[str, int], settings: AlignSettings,
             warnings: list[str]) -> CommandResult:
    plan = session.plan
    instructions = plan.judge.instructions
    examples = [Disagreement(line, "", "pass", "fail", None, events)
                for line, events in plan.train_events.items()]
    request = proposal_request(instructions, examples, [], model=plan.optimizer_model[1])
    start = session.evaluation_estimate(instructions)
    asking = optimizer_estimate(request, plan.optimizer_model, session.budget.prices)
    candidate = session.evaluation_estimate(instructions, cached=False)
    output = AlignDryRun(plan.judge.name, counts, settings.rounds, start, asking, candidate)
    stdout = render(ReportKind.ALIGN_DRY_RUN, check_format(ReportKind.ALIGN_DRY_RUN, settings.fmt),
                    output)
    return CommandResult(stdout, tuple(f"warning: {w}" for w in warnings))


def _run(session: AlignSession, counts: dict[str, int], settings: AlignSettings,
         original: bytes, warnings: list[str]) -> CommandResult:
    plan = session.plan
    instructions = plan.judge.instructions
    first = session.evaluation_estimate(instructions)
    if not session.budget.allows(first):
        raise DataError(f"--max-cost ${settings.max_cost:.4f} does not cover evaluating the "
                        f"current rubric on train and dev (estimated ${first.cost or 0:.4f}); "
                        "raise it")
    start = session.evaluate(instructions)
    if isinstance(start, Stop):
        return _finish(session, counts, settings, original, instructions, None, [],
                       instructions, start, warnings)
    rounds, final, stop = session.rounds(instructions, start)
    if not rounds and stop is not None and stop.exit_code is ExitCode.OK:
        # Not one round ran: nothing to learn from, or no money for a round.
        reason = ("no train disagreement to learn from: the judge agrees with every scored "
                  "train row" if stop.reason == NOTHING_LEFT else stop.reason)
        stop = Stop(reason, ExitCode.PROBLEMS)
    return _finish(session, counts, settings, original, instructions, start, rounds, final,
                   stop, warnings)


def _finish(session: AlignSession, counts: dict[str, int], settings: AlignSettings,
            original: bytes, instructions: str, start: Evaluated | None,
            rounds: list[RoundResult],
            final: str, stop: Stop | None, warnings: list[str]) -> CommandResult:
    plan, budget = session.plan, session.budget
    kept_rounds = [r for r in rounds if r.kept]
    last = kept_rounds[-1] if kept_rounds else None
    start_figures = {} if start is None else {"train": figures(start.train),
                                              "dev": figures(start.dev)}
    final_figures = start_figures if last is None or last.train_figures is None \
        or last.dev_figures is None else {"train": last.train_figures,
                                          "dev": last.dev_figures}
    stopped = stop.reason if stop is not None else f"ran all {settings.rounds} round(s)"
    run = AlignRun(plan.judge.name, plan.judge_model, plan.optimizer_model, counts,
                   instructions, final, start_figures, final_figures, tuple(rounds), stopped,
                   Spend(budget.optimizer_calls, budget.judge_requests, budget.input_tokens,
                         budget.output_tokens, budget.spent, budget.limit),
                   tuple(dict.fromkeys([*warnings, *session.warnings])))
    file_diff, note = _file_diff(plan.judge.path, original, final)
    written = False
    problems = [f"warning: {w}" for w in run.warnings]
    exit_code = stop.exit_code if stop is not None else ExitCode.OK
    if settings.write and final != instructions and exit_code is ExitCode.OK:
        write_instructions(plan.judge.path, original, final)
        written = True
    footer = _footer(plan.judge.name, changed=final != instructions, written=written,
                     write=settings.write, note=note)
    output = AlignOutput(run, str(plan.recipe.root), file_diff, written, tuple(footer))
    stdout = render(ReportKind.ALIGN, check_format(ReportKind.ALIGN, settings.fmt), output)
    if stop is not None and exit_code is not ExitCode.OK:
        problems.insert(0, stop.reason)
    return CommandResult(stdout, tuple(problems), exit_code)


def _file_diff(path: Path, original: bytes, final: str) -> tuple[str, str | None]:
    """The judge file's unified diff with the final rubric (or why there is none)."""
    try:
        new = replace_instructions(original, final, what=str(path))
    except UnsupportedJudgeFile as exc:
        return "", str(exc)
    if new == original:
        return "", None
    before = original.decode("utf-8").splitlines()
    after = new.decode("utf-8").splitlines()
    lines = difflib.unified_diff(before, after, f"a/{path.name}", f"b/{path.name}",
                                 lineterm="")
    return "\n".join(lines) + "\n", None


def _footer(judge: str, *, changed: bool, written: bool, write: bool,
            note: str | None) -> list[str]:
    lines = []
    if not changed:
        lines.append("No candidate was kept: the judge file is unchanged.")
    elif written:
        lines.append("The kept rubric was written to the judge file (only its instructions "
                     "changed).")
    elif not write:
        lines.append("Nothing was written; rerun with --write to apply the kept rubric"
                     + (f" ({note})" if note else "") + ".")
    else:
        lines.append("Nothing was written: the run did not finish (see why above); run it "
                     "again (verdicts received are cached).")
    lines.append(f"Next step: certify on the held-out test rows: introspection judges certify "
                 f"--judge {judge}")
    return lines
