"""The rounds of ``judges align``: propose, refuse or evaluate, keep or not.

The current rubric is evaluated on ``train`` and ``dev`` first (the verdict
cache applies). Each round then asks the optimizer for one edit from the
current train disagreements, tidies it, refuses it when it quotes a row
outside ``train`` (or is empty, unchanged, too long, unwritable), evaluates it
on ``train`` and ``dev``, and keeps it when the dev comparison passes every
keep rule (:mod:`.keep_rules`); a kept candidate becomes the current rubric.
The run stops after ``rounds`` rounds, when no train disagreement is left,
when the next round's estimate would take it past ``--max-cost``, or when a
provider fails (:class:`Stop`). Only ``train`` and ``dev`` rows are ever
planned, so no ``test`` row is rendered or sent.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from introspection_cli.alignment.candidates import refusal, tidy
from introspection_cli.alignment.keep_rules import agrees, compare_dev, failed, keep_rules
from introspection_cli.alignment.leakage import GuardedRow
from introspection_cli.alignment.optimizer import (
    Disagreement,
    InvalidProposal,
    TriedEdit,
    parse_proposal,
    proposal_request,
)
from introspection_cli.alignment.results import RoundResult, figures, rubric_diff
from introspection_cli.alignment.spend import (
    Budget,
    Estimate,
    Model,
    evaluation_estimate,
    optimizer_estimate,
)
from introspection_cli.errors import ConfigError, ExitCode
from introspection_cli.evaluation.outcomes import RowOutcome
from introspection_cli.evaluation.providers import (
    API_KEY_ENV,
    ModelReply,
    ModelRequest,
    ProviderAuthError,
    ProviderError,
    ProviderRefused,
    create_provider,
)
from introspection_cli.evaluation.runner import (
    EvalOptions,
    ProviderFactory,
    provider_settings,
    run_eval,
)
from introspection_cli.recipe.model import Judge, Recipe

#: The least time an optimizer call is given, in seconds: a whole rubric takes a while
#: to write, longer than a verdict (``--timeout`` is used when it is longer).
OPTIMIZER_TIMEOUT = 300.0
#: Why a run stops when the current rubric agrees with every scored train row.
NOTHING_LEFT = "no train disagreement is left to learn from"
#: The McNemar mid-p above which a kept edit's dev change is called not significant.
SIGNIFICANCE = 0.05


@dataclass(frozen=True)
class AlignPlan:
    """Everything a run needs, decided before any call."""

    recipe: Recipe
    judge: Judge
    #: The judge's runs: this judge, the train and dev splits.
    options: EvalOptions
    judge_model: Model
    optimizer_model: Model
    rounds: int
    #: Train rows' events by line, to show the optimizer their conversations.
    train_events: Mapping[int, Sequence[object]]
    guarded: tuple[GuardedRow, ...]


@dataclass(frozen=True, slots=True)
class Stop:
    """Why the run ended early, and the exit code that goes with it (OK: not a failure)."""

    reason: str
    exit_code: ExitCode = ExitCode.OK


@dataclass(frozen=True)
class Evaluated:
    """A rubric's outcomes on train and dev, and what evaluating it cost."""

    train: tuple[RowOutcome, ...]
    dev: tuple[RowOutcome, ...]
    cost: float | None


@dataclass(frozen=True)
class _RoundOutcome:
    """What a round left: its record (None when it never asked), the candidate's
    evaluation (when it was evaluated), and why the run stops here (None: go on)."""

    result: RoundResult | None = None
    evaluated: Evaluated | None = None
    stop: Stop | None = None


def with_instructions(recipe: Recipe, judge: Judge, instructions: str) -> Recipe:
    """``recipe`` with ``judge``'s rubric replaced (the same files, gate and model)."""
    return replace(recipe, judges={**recipe.judges,
                                   judge.name: replace(judge, instructions=instructions)})


@dataclass
class AlignSession:
    plan: AlignPlan
    budget: Budget
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    provider_factory: ProviderFactory = create_provider
    #: Told what the run is doing before each slow step (a line for a terminal).
    progress: Callable[[str], None] | None = None
    warnings: list[str] = field(default_factory=list)
    _fresh_estimates: dict[str, Estimate] = field(default_factory=dict)

    def evaluate(self, instructions: str) -> Evaluated | Stop:
        """Run the judge with ``instructions`` over train and dev."""
        plan = self.plan
        which = "the current rubric" if instructions == plan.judge.instructions else "a candidate"
        self._say(f"evaluating {which} on train and dev")
        result = run_eval(with_instructions(plan.recipe, plan.judge, instructions),
                          plan.options, environ=self.environ,
                          provider_factory=self.provider_factory)
        self.warnings += [w for w in result.warnings if w not in self.warnings]
        (run,) = result.run.judges
        cost = self.budget.add_run(plan.judge_model, run.usage)
        if result.refused:
            return Stop("; ".join(result.refusals) or "the provider refused the judge's "
                        "requests as wrong", ExitCode.USAGE)
        if result.service_failures:
            return Stop(f"{result.service_failures} row(s) failed at the model provider after "
                        "retries; rerun to retry them (verdicts received are cached)",
                        ExitCode.SERVICE)
        return Evaluated(tuple(r for r in run.rows if r.split == "train"),
                         tuple(r for r in run.rows if r.split == "dev"), cost)

    def evaluation_estimate(self, instructions: str, *, cached: bool = True) -> Estimate:
        """What evaluating ``instructions`` would cost (``cached=False``: as if nothing were
        in the cache, which is what a rubric not written yet costs)."""
        plan = self.plan
        options = plan.options if cached else replace(plan.options, use_cache=False)
        if not cached and instructions in self._fresh_estimates:
            return self._fresh_estimates[instructions]
        estimate = evaluation_estimate(with_instructions(plan.recipe, plan.judge, instructions),
                                       options, plan.judge_model, self.budget.prices)
        if not cached:
            self._fresh_estimates[instructions] = estimate
        return estimate

    def rounds(self, instructions: str, start: Evaluated) -> tuple[list[RoundResult], str,
                                                                   Stop | None]:
        """Every round from ``instructions`` evaluated as ``start``: the rounds, the rubric
        they end with, and why they stopped early (None: all rounds ran)."""
        results: list[RoundResult] = []
        tried: list[TriedEdit] = []
        current = (instructions, start)
        for number in range(1, self.plan.rounds + 1):
            disagreements = self._disagreements(current[1].train)
            if not disagreements:
                return results, current[0], Stop(NOTHING_LEFT)
            request = proposal_request(current[0], disagreements, tried,
                                       model=self.plan.optimizer_model[1])
            outcome = self._round(number, current, request, tried, start)
            if outcome.result is not None:
                results.append(outcome.result)
            if outcome.stop is not None:
                return results, current[0], outcome.stop
            kept = outcome.result is not None and outcome.result.kept
            if kept and outcome.evaluated is not None and outcome.result is not None \
                    and outcome.result.candidate is not None:
                current = (outcome.result.candidate, outcome.evaluated)
        return results, current[0], None

    def _round(self, number: int, current: tuple[str, Evaluated], request: ModelRequest,
               tried: list[TriedEdit], start: Evaluated) -> _RoundOutcome:
        instructions, evaluated = current
        ahead = optimizer_estimate(request, self.plan.optimizer_model, self.budget.prices) \
            + self.evaluation_estimate(instructions, cached=False)
        if not self.budget.allows(ahead):
            return _RoundOutcome(stop=self._over_budget(f"round {number}", ahead))
        self._say(f"round {number}: asking {'/'.join(self.plan.optimizer_model)} for an edit")
        reply = self._ask(request)
        if isinstance(reply, Stop):
            return _RoundOutcome(stop=reply)
        cost = self.budget.add_reply(self.plan.optimizer_model, reply)
        proposal = parse_proposal(reply)
        if isinstance(proposal, InvalidProposal):
            return _RoundOutcome(RoundResult(number, f"no usable edit: {proposal.reason}",
                                             cost=cost))
        candidate = tidy(proposal.instructions)
        base = RoundResult(number, "", proposal.rationale, candidate,
                           rubric_diff(instructions, candidate), cost=cost)
        refused = refusal(candidate, instructions, self.plan.guarded)
        if refused is not None:
            tried.append(TriedEdit(proposal.rationale, refused.rule))
            return _RoundOutcome(replace(base, note=f"refused before evaluation: "
                                         f"{refused.detail}", checks=(refused,),
                                         refused_by=(refused,)))
        exact = self.evaluation_estimate(candidate)
        if not self.budget.allows(exact):
            stop = self._over_budget(f"evaluating round {number}'s candidate", exact)
            return _RoundOutcome(replace(base, note=f"not evaluated: {stop.reason}"), stop=stop)
        outcome = self.evaluate(candidate)
        if isinstance(outcome, Stop):
            return _RoundOutcome(replace(base, note=f"not evaluated: {outcome.reason}"),
                                 stop=outcome)
        return _RoundOutcome(self._decide(base, evaluated, outcome, tried, start), outcome)

    def _decide(self, base: RoundResult, current: Evaluated, candidate: Evaluated,
                tried: list[TriedEdit], start: Evaluated) -> RoundResult:
        dev = compare_dev(current.dev, candidate.dev)
        # After a kept edit the class rules hold against the first rubric too: one row's
        # worth per round would let kept rounds empty a class a row at a time.
        since_start = None if current is start else compare_dev(start.dev, candidate.dev)
        checks = keep_rules(dev, since_start)
        missed = failed(checks)
        cost = None if base.cost is None or candidate.cost is None else base.cost + candidate.cost
        result = replace(base, checks=checks, refused_by=missed, dev=dev,
                         dev_figures=figures(candidate.dev),
                         train_figures=figures(candidate.train), kept=not missed, cost=cost)
        if missed:
            tried.append(TriedEdit(base.rationale or "", ", ".join(c.rule for c in missed)))
            return replace(result, note="not kept: the edit breaks "
                           + ", ".join(check.rule for check in missed))
        note = f"kept: dev rows gained {dev.gained}, lost {dev.lost}"
        if dev.p_value > SIGNIFICANCE:
            # The rules refuse harm, not luck: an edit no better than the rubric passes
            # them about a third of the time (docs/align.md), so say when dev cannot tell.
            note += (f"; on its own the dev change is not significant (mid-p "
                     f"{dev.p_value:.2g} > {SIGNIFICANCE}): the test split decides")
        return replace(result, note=note)

    def _say(self, step: str) -> None:
        if self.progress is not None:
            self.progress(step)

    def _over_budget(self, what: str, estimate: Estimate) -> Stop:
        spent = self.budget.spent or 0.0
        return Stop(f"stopped before {what}: spent ${spent:.4f} and {what} is estimated at "
                    f"${estimate.cost or 0.0:.4f}, which would pass --max-cost "
                    f"${self.budget.limit:.4f}")

    def _disagreements(self, train: Sequence[RowOutcome]) -> list[Disagreement]:
        return [Disagreement(row.line, row.conversation_id, row.expected, row.outcome,
                             row.reasoning, self.plan.train_events.get(row.line, ()))
                for row in train
                if row.outcome != "error" and not agrees(row.expected, row.outcome)]

    def _ask(self, request: ModelRequest) -> ModelReply | Stop:
        """One optimizer call; a provider failure is a :class:`Stop` (a rejected key raises)."""
        provider_name, model = self.plan.optimizer_model
        key = self.environ.get(API_KEY_ENV[provider_name], "").strip()
        options = self.plan.options
        settings = provider_settings(provider_name, key, self.environ,
                                     max_retries=options.max_retries,
                                     timeout=max(options.timeout, OPTIMIZER_TIMEOUT))

        async def call() -> ModelReply:
            provider = self.provider_factory(provider_name, settings)
            try:
                return await provider.complete(request)
            finally:
                await provider.aclose()

        try:
            return asyncio.run(call())
        except ProviderAuthError as exc:
            raise ConfigError(f"the optimizer model's provider rejected the key: {exc}") \
                from exc
        except ProviderRefused as exc:
            return Stop(f"the {provider_name} provider refused the optimizer request for model "
                        f"{model} at {exc.endpoint or settings.base_url} as wrong (HTTP "
                        f"{exc.status}): check --optimizer-model", ExitCode.USAGE)
        except ProviderError as exc:
            return Stop(f"the optimizer call failed: {exc}", ExitCode.SERVICE)
