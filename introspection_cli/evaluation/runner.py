"""Running judges over their calibration rows: the core of ``introspection judges eval``.

The run is planned first (judges, verified rows, gate decisions); each
provider's rows are then rendered and looked up in the cache up to its first
miss, which tells which providers will actually be called, so their API keys
are checked before any call. The samples not in the cache are then sent
concurrently under a semaphore while the remaining rows are rendered (or, with
``--batch``, all of them through the providers' batch APIs: :mod:`.batch`). Every sample ends as
a verdict or an error with its reason; one bad reply never aborts the run. The
one failure that does abort is a rejected API key, since no later call can
succeed either.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from introspection_cli.errors import ConfigError, UsageError
from introspection_cli.evaluation.batch import (
    BatchEvents,
    BatchItem,
    BatchOptions,
    BatchRunResult,
    SlotSink,
    send_in_batches,
)
from introspection_cli.evaluation.cache import VerdictCache, cache_key, default_cache_dir
from introspection_cli.evaluation.fingerprint import judge_fingerprint
from introspection_cli.evaluation.gate import DEFAULT_REGEX_TIMEOUT
from introspection_cli.evaluation.outcomes import EvalRun, JudgeRun, RowOutcome, Usage
from introspection_cli.evaluation.plan import (
    JudgePlan,
    PlannedRow,
    check_splits,
    plan_judge,
    select_judges,
)
from introspection_cli.evaluation.providers import (
    API_KEY_ENV,
    BASE_URL_ENV,
    ModelReply,
    ModelRequest,
    Provider,
    ProviderAuthError,
    ProviderBadResponse,
    ProviderError,
    ProviderSettings,
    create_provider,
    resolve_endpoint,
)
from introspection_cli.evaluation.verdict import ParsedVerdict, parse_reply
from introspection_cli.evaluation.voting import SampleResult, decide
from introspection_cli.recipe.model import Recipe

ProviderFactory = Callable[[str, ProviderSettings], Provider]
#: Called with (rows finished, rows in total) as the run progresses.
ProgressCallback = Callable[[int, int], None]


@dataclass(frozen=True)
class EvalOptions:
    """What ``judges eval`` was asked to do, independent of the command line."""

    judges: tuple[str, ...] = ()  # empty: every judge with a calibration file
    splits: tuple[str, ...] = ()  # empty: every split
    samples: int = 1
    concurrency: int = 8
    provider: str | None = None  # overrides each judge's llm.provider
    model: str | None = None  # overrides each judge's llm.model
    use_cache: bool = True
    cache_dir: Path | None = None  # None: default_cache_dir()
    max_retries: int = 2
    timeout: float = 60.0
    regex_timeout: float = DEFAULT_REGEX_TIMEOUT
    #: Send uncached samples through the providers' batch APIs, waiting like this.
    batch: BatchOptions | None = None


@dataclass(frozen=True)
class EvalResult:
    run: EvalRun
    #: Rows whose outcome is an error because the provider failed after retries.
    service_failures: int = 0
    cache_write_failures: int = 0
    #: Things the user should know that do not change the exit code, one line each.
    warnings: tuple[str, ...] = ()
    #: ``provider batch_id`` of each batch still running when ``--batch`` stopped waiting.
    batches_running: tuple[str, ...] = ()


def run_eval(recipe: Recipe, options: EvalOptions, *,
             progress: ProgressCallback | None = None,
             provider_factory: ProviderFactory = create_provider,
             environ: Mapping[str, str] | None = None,
             batch_events: BatchEvents | None = None) -> EvalResult:
    """Evaluate the chosen judges of ``recipe`` and return every row's outcome."""
    import os

    env = os.environ if environ is None else environ
    _check_options(options)
    splits = check_splits(options.splits)
    plans = [plan_judge(judge, splits=splits, provider=options.provider, model=options.model,
                        regex_timeout=options.regex_timeout)
             for judge in select_judges(recipe, options.judges)]
    cache = VerdictCache(options.cache_dir or default_cache_dir()) if options.use_cache else None
    try:
        execution = _Execution(plans, options, cache, env, provider_factory, progress,
                               batch_events)
        run = asyncio.run(execution.run(str(recipe.root)))
    finally:
        if cache is not None:
            cache.close()
    warnings = (*(plan.ignored_temperature for plan in plans if plan.ignored_temperature),
                *execution.batch_result.warnings)
    return EvalResult(run, execution.service_failures,
                      cache.write_failures if cache is not None else 0, warnings,
                      execution.batch_result.still_running)


def _check_options(options: EvalOptions) -> None:
    if options.samples < 1:
        raise UsageError("--samples must be at least 1")
    if options.concurrency < 1:
        raise UsageError("--concurrency must be at least 1")
    if options.max_retries < 0:
        raise UsageError("--max-retries must be 0 or more")
    if not (0 < options.timeout < float("inf")):  # NaN fails this too
        raise UsageError("--timeout must be a positive number of seconds")
    if options.provider is not None and options.provider not in API_KEY_ENV:
        raise UsageError(f"unknown provider {options.provider!r}: use openai or anthropic")


@dataclass
class _Slot:
    """One sample of one row: its request, its cache key and, once known, its result."""

    plan: JudgePlan
    row: PlannedRow
    sample: int
    request: ModelRequest
    key: str
    result: SampleResult | None = None


class _AuthAbort(Exception):
    """Cancels the remaining calls once a provider has rejected the API key."""


#: A row's samples, rendered, keyed and looked up in the cache.
_RowSlots = list[_Slot]
#: Rows rendered between two turns of the event loop once calls are in flight, so a
#: finished call never waits long for the next one to be sent.
_RENDER_BATCH = 8


class _Execution:
    def __init__(self, plans: Sequence[JudgePlan], options: EvalOptions,
                 cache: VerdictCache | None, env: Mapping[str, str],
                 factory: ProviderFactory, progress: ProgressCallback | None,
                 batch_events: BatchEvents | None = None) -> None:
        self.plans = plans
        self.options = options
        self.cache = cache
        self.env = env
        self.factory = factory
        self.progress = progress
        self.usage = Usage()
        self.service_failures = 0
        self.auth_failure: ProviderAuthError | None = None
        self.slots: list[_Slot] = []
        self.rows_total = sum(len(plan.rows) for plan in plans)
        # Gated rows and gate errors make no call: they are done before anything runs.
        self.rows_done = sum(1 for plan in plans for row in plan.rows if not row.calls_model)
        self.rows_pending: dict[int, int] = {}
        self.batch_events = batch_events
        self.batch_result = BatchRunResult()

    def _rows(self, plans: Sequence[JudgePlan]) -> Iterator[_RowSlots]:
        """Each row that calls the model, as its samples; rendered only when asked for."""
        for plan in plans:
            endpoint = resolve_endpoint(plan.provider, self.env)
            for row in plan.rows:
                if not row.calls_model:
                    continue
                request = plan.request_for(row)
                samples = [self._slot(plan, row, request, endpoint, sample)
                           for sample in range(self.options.samples)]
                self.slots += samples
                misses = sum(1 for slot in samples if slot.result is None)
                if misses:
                    self.rows_pending[id(row)] = misses
                else:
                    self.rows_done += 1
                yield samples

    def _slot(self, plan: JudgePlan, row: PlannedRow, request: ModelRequest, endpoint: str,
              sample: int) -> _Slot:
        key = cache_key(provider=plan.provider, endpoint=endpoint, request=request,
                        sample=sample)
        slot = _Slot(plan, row, sample, request, key)
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is not None:
            slot.result = SampleResult(hit, cached=True)
            self.usage.cached += 1
        return slot

    async def run(self, recipe: str) -> EvalRun:
        rows_by_provider = {
            name: self._rows([plan for plan in self.plans if plan.provider == name])
            for name in dict.fromkeys(plan.provider for plan in self.plans)}
        first = _until_first_miss(rows_by_provider)
        if self.options.batch is not None:
            await self._send_in_batches(self.options.batch, first, rows_by_provider)
            return EvalRun(recipe, tuple(self._judge_run(plan) for plan in self.plans),
                           self.usage)
        providers = self._providers_for(first, rows_by_provider)
        self._report_progress()
        semaphore = asyncio.Semaphore(self.options.concurrency)
        try:
            async with asyncio.TaskGroup() as group:
                def submit(samples: _RowSlots) -> None:
                    for slot in samples:
                        if slot.result is None:
                            group.create_task(self._call(slot, providers[slot.plan.provider],
                                                         semaphore))

                for samples in first:
                    submit(samples)
                # The calls submitted so far run while the remaining rows are rendered.
                rest = itertools.chain.from_iterable(rows_by_provider.values())
                for count, samples in enumerate(rest, start=1):
                    submit(samples)
                    if count % _RENDER_BATCH == 0:
                        await asyncio.sleep(0)
        except* _AuthAbort:
            pass
        finally:
            for provider in providers.values():
                await provider.aclose()
        if self.auth_failure is not None:
            raise ConfigError(f"{self.auth_failure}; the run was stopped before calling "
                              "the model for the remaining rows") from self.auth_failure
        return EvalRun(recipe, tuple(self._judge_run(plan) for plan in self.plans), self.usage)

    def _providers_for(self, first: Sequence[_RowSlots],
                       rows_by_provider: Mapping[str, Iterator[_RowSlots]]
                       ) -> dict[str, Provider]:
        """Create the providers that will be called; a missing key stops the run here."""
        return {name: self.factory(name, settings)
                for name, settings in self._settings_for(first, rows_by_provider).items()}

    def _settings_for(self, first: Sequence[_RowSlots],
                      rows_by_provider: Mapping[str, Iterator[_RowSlots]]
                      ) -> dict[str, ProviderSettings]:
        """The settings of each provider ``first`` needs; a missing key stops the run here."""
        needed = list(dict.fromkeys(slot.plan.provider for samples in first
                                    for slot in samples if slot.result is None))
        settings: dict[str, ProviderSettings] = {}
        for name in needed:
            key = self.env.get(API_KEY_ENV[name], "").strip()
            if not key:
                # Only the error message needs every judge: read the provider's other rows.
                missing = [slot for samples in (*first, *rows_by_provider[name])
                           for slot in samples if slot.result is None]
                judges = dict.fromkeys(slot.plan.judge.name for slot in missing
                                       if slot.plan.provider == name)
                raise ConfigError(
                    f"{API_KEY_ENV[name]} is not set, and judge(s) {', '.join(judges)} need "
                    f"the {name} provider for rows not in the cache; export {API_KEY_ENV[name]} "
                    f"(for a local compatible server set {BASE_URL_ENV[name]} and any "
                    "non-empty key)")
            settings[name] = ProviderSettings(key, resolve_endpoint(name, self.env),
                                              self.options.max_retries, self.options.timeout)
        return settings

    async def _call(self, slot: _Slot, provider: Provider, semaphore: asyncio.Semaphore) -> None:
        async with semaphore:
            self.usage.requests += 1
            try:
                reply = await provider.complete(slot.request)
            except ProviderAuthError as exc:
                self.auth_failure = self.auth_failure or exc
                raise _AuthAbort from exc
            except ProviderError as exc:
                self._settle(slot, exc)
            else:
                self._settle(slot, reply)

    def _settle(self, slot: _Slot, outcome: ModelReply | ProviderError) -> None:
        """Record one sample's reply or failure: usage, its result, the cache, progress."""
        if isinstance(outcome, ProviderBadResponse):
            slot.result = SampleResult(None, str(outcome))
        elif isinstance(outcome, ProviderError):
            slot.result = SampleResult(None, str(outcome), service_failure=True)
        else:
            self.usage.input_tokens += outcome.input_tokens
            self.usage.output_tokens += outcome.output_tokens
            parsed = parse_reply(outcome)
            if isinstance(parsed, ParsedVerdict):
                slot.result = SampleResult(parsed)
                if self.cache is not None:
                    self.cache.put(slot.key, parsed)
            else:
                slot.result = SampleResult(None, parsed.reason)
        self.rows_pending[id(slot.row)] -= 1
        if self.rows_pending[id(slot.row)] == 0:
            self.rows_done += 1
            self._report_progress()

    async def _send_in_batches(self, options: BatchOptions, first: Sequence[_RowSlots],
                               rows_by_provider: Mapping[str, Iterator[_RowSlots]]) -> None:
        """Every uncached sample through its provider's batch API (``--batch``)."""
        rows = [*first, *itertools.chain.from_iterable(rows_by_provider.values())]
        settings = self._settings_for(rows, {name: iter(()) for name in rows_by_provider})
        slots_by_key: dict[str, list[_Slot]] = {}
        for slot in itertools.chain.from_iterable(rows):
            if slot.result is None:
                slots_by_key.setdefault(slot.key, []).append(slot)
        items: dict[str, list[BatchItem]] = {}
        for key, (slot, *_) in slots_by_key.items():
            items.setdefault(slot.plan.provider, []).append(BatchItem(key, slot.request))
        sink = SlotSink(slots_by_key, self._settle, cache=self.cache, usage=self.usage)
        try:
            self.batch_result = await send_in_batches(
                items, settings, store_dir=self.options.cache_dir or default_cache_dir(),
                options=options, sink=sink, events=self.batch_events)
        except ProviderAuthError as exc:
            raise ConfigError(f"{exc}; the run was stopped before collecting the remaining "
                              "rows") from exc

    def _report_progress(self) -> None:
        if self.progress is not None:
            self.progress(self.rows_done, self.rows_total)

    def _judge_run(self, plan: JudgePlan) -> JudgeRun:
        samples_by_row: dict[int, list[SampleResult]] = {}
        for slot in self.slots:
            if slot.plan is plan and slot.result is not None:
                samples_by_row.setdefault(id(slot.row), []).append(slot.result)
        rows = tuple(self._row_outcome(row, samples_by_row.get(id(row), []))
                     for row in plan.rows)
        return JudgeRun(plan.judge.name, plan.provider, plan.model, rows, plan.rejected,
                        fingerprint=judge_fingerprint(plan.judge, provider=plan.provider,
                                                      model=plan.model),
                        held_out=plan.held_out)

    def _row_outcome(self, row: PlannedRow, samples: Sequence[SampleResult]) -> RowOutcome:
        def outcome(**fields: Any) -> RowOutcome:
            return RowOutcome(line=row.line, conversation_id=row.conversation_id,
                              split=row.split, expected=row.expected, **fields)

        if row.gate_error is not None:
            return outcome(outcome="error", error=row.gate_error)
        if row.gated:
            return outcome(outcome="gated")
        decision = decide(samples)
        if decision.outcome == "error" and any(s.service_failure for s in samples):
            self.service_failures += 1
        return outcome(
            outcome=decision.outcome,
            samples=tuple(s.outcome for s in samples),
            unstable=decision.unstable,
            reasoning=decision.reasoning,
            error=decision.error,
            cached=bool(samples) and all(s.cached for s in samples),
        )


def _until_first_miss(rows_by_provider: Mapping[str, Iterator[_RowSlots]]) -> list[_RowSlots]:
    """Read each provider's rows up to its first cache miss, leaving the rest unread.

    Then it is known which providers will be called, so every API key is checked
    before the first call, yet no row after a provider's first miss has been
    rendered: those are rendered while the first calls are in flight. A provider
    whose rows are all cached is read to the end and never called.
    """
    first: list[_RowSlots] = []
    for rows in rows_by_provider.values():
        for samples in rows:
            first.append(samples)
            if any(slot.result is None for slot in samples):
                break
    return first
