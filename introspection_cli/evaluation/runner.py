"""Running judges over their calibration rows: the core of ``introspection judges eval``.

The run is planned first (judges, verified rows, gate decisions). Then its parts,
each in its own module:

* the prepare step (:mod:`.prepare`): a re-run whose every row is found in the
  cache by memo is done there, read on this thread with no event loop; otherwise
  the SDKs that will be called are imported before the loop starts, each
  provider's rows are rendered and looked up in the cache up to its first miss,
  and the API keys of the providers that will be called are checked before any
  call;
* a dispatcher (:mod:`.dispatch`) sends the samples not in the cache while the
  remaining rows are rendered: one call per sample, or with ``--batch`` every
  one through the providers' batch APIs (:mod:`.batch.dispatcher`);
* the settler (:mod:`.settle`) turns each reply or error into the sample's result
  (a verdict, cached; or an error with its reason), and each row's results into
  its outcome;
* the run ledger (:mod:`.run_ledger`) counts it all: rows done, usage, progress.

One bad reply never aborts the run; a rejected API key does, since no later call
can succeed either.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from introspection_cli.errors import UsageError
from introspection_cli.evaluation.cache import VerdictCache, default_cache_dir
from introspection_cli.evaluation.gate import DEFAULT_REGEX_TIMEOUT
from introspection_cli.evaluation.outcomes import EvalRun
from introspection_cli.evaluation.plan import JudgePlan, check_splits, plan_judge, select_judges
from introspection_cli.evaluation.prepare import RunStart, SdkPreload
from introspection_cli.evaluation.prepare import provider_settings as provider_settings
from introspection_cli.evaluation.providers import API_KEY_ENV, create_provider, import_provider
from introspection_cli.evaluation.providers import ProviderFactory as ProviderFactory
from introspection_cli.evaluation.run_ledger import ProgressCallback as ProgressCallback
from introspection_cli.evaluation.run_ledger import RunLedger
from introspection_cli.evaluation.run_ledger import RunProgress as RunProgress
from introspection_cli.evaluation.settle import OutcomeBuilder, Settler
from introspection_cli.gcpause import collector_paused
from introspection_cli.recipe.model import Recipe

if TYPE_CHECKING:  # the event loop's side of a run, and --batch's: loaded only when needed
    from collections.abc import AsyncIterator

    from introspection_cli.evaluation.batch import BatchEvents, BatchOptions, BatchRunResult
    from introspection_cli.evaluation.batch.dispatcher import BatchDispatcher
    from introspection_cli.evaluation.cache_worker import CacheWorker
    from introspection_cli.evaluation.dispatch import Dispatcher
    from introspection_cli.evaluation.prepare import ProviderRows
    from introspection_cli.evaluation.providers import ProviderSettings
    from introspection_cli.evaluation.sharing import Waiting
    from introspection_cli.evaluation.slots import RowSlots


@dataclass(frozen=True)
class EvalOptions:
    """What ``judges eval`` was asked to do, independent of the command line."""

    judges: tuple[str, ...] = ()  # empty: every judge with a calibration file
    splits: tuple[str, ...] = ()  # empty: every split
    samples: int = 1
    concurrency: int = 8  # per provider: the most calls in flight at once
    provider: str | None = None  # overrides each judge's llm.provider
    model: str | None = None  # overrides each judge's llm.model
    #: Further (provider or None, model) pairs: each judge is evaluated once more with
    #: each, on the same rows, in the same run (a None provider: as for ``model``).
    compare_models: tuple[tuple[str | None, str], ...] = ()
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
    #: Rows the provider refused as wrong requests (a non-retryable 4xx), and why
    #: (one line per provider and model).
    refused: int = 0
    refusals: tuple[str, ...] = field(default_factory=tuple)
    #: ``provider batch_id`` of each batch still running when ``--batch`` stopped waiting.
    batches_running: tuple[str, ...] = ()


def run_eval(recipe: Recipe, options: EvalOptions, *,
             progress: ProgressCallback | None = None,
             provider_factory: ProviderFactory = create_provider,
             environ: Mapping[str, str] | None = None,
             batch_events: BatchEvents | None = None,
             preload_sdk: SdkPreload | None = import_provider) -> EvalResult:
    """Evaluate the chosen judges of ``recipe`` and return every row's outcome.

    ``provider_factory`` builds each provider that is called; ``preload_sdk`` imports
    a provider's SDK before the run's event loop starts, when a call is expected
    (None: providers that load no SDK, such as a caller's own).
    """
    plans = make_plans(recipe, options)
    return run_plans(str(recipe.root), plans, options, progress=progress,
                     provider_factory=provider_factory, environ=environ,
                     batch_events=batch_events, preload_sdk=preload_sdk)


def make_plans(recipe: Recipe, options: EvalOptions) -> list[JudgePlan]:
    """The plan of every chosen judge with every chosen model (options checked first)."""
    _check_options(options)
    splits = check_splits(options.splits)
    models = [(options.provider, options.model), *options.compare_models]
    return [plan_judge(judge, splits=splits, provider=provider or options.provider,
                       model=model, regex_timeout=options.regex_timeout)
            for judge in select_judges(recipe, options.judges) for provider, model in models]


def run_plans(recipe: str, plans: Sequence[JudgePlan], options: EvalOptions, *,
              progress: ProgressCallback | None = None,
              provider_factory: ProviderFactory = create_provider,
              environ: Mapping[str, str] | None = None,
              batch_events: BatchEvents | None = None,
              preload_sdk: SdkPreload | None = import_provider) -> EvalResult:
    """Run judge plans made already (``judges estimate`` plans unlabelled rows itself)."""
    import os

    env = os.environ if environ is None else environ
    _check_options(options)
    # Only a model comparison reports what the rows' cached replies used.
    cache = (VerdictCache(options.cache_dir or default_cache_dir(),
                          read_tokens=bool(options.compare_models))
             if options.use_cache else None)
    ledger = RunLedger(plans, progress)
    start = RunStart(plans, samples=options.samples, cache=cache, env=env,
                     max_retries=options.max_retries, timeout=options.timeout,
                     preload=preload_sdk)
    # Read on this thread, nothing sent: every slot and outcome lives for the run, and
    # none is in a cycle, so the collector's passes over them would free nothing.
    with collector_paused(freeze=True):
        remembered = options.batch is None and start.found_by_memo(ledger)
    sending = _Sending(start, ledger, options, provider_factory, batch_events)
    if not remembered:
        import asyncio  # here: a run whose every verdict is found by memo needs no loop

        if options.batch is None:
            start.import_sdks()
        # The coroutine returns nothing: on Python 3.11, asyncio.run formats the main
        # task's repr, its result included, when it puts back the SIGINT handler (twice),
        # and the repr of a 4,000-row EvalRun took 25 ms each time.
        asyncio.run(sending.run())
    outcomes = OutcomeBuilder()
    with collector_paused(freeze=remembered):
        run = outcomes.eval_run(recipe, ledger, options.samples)
    return EvalResult(run, outcomes.service_failures,
                      cache.write_failures if cache is not None else 0,
                      _warnings(plans, cache, sending), outcomes.refused,
                      tuple(sending.refusals.values()),
                      sending.batch.still_running if sending.batch is not None else ())


def _check_options(options: EvalOptions) -> None:
    if options.samples < 1:
        raise UsageError("--samples must be at least 1")
    if options.concurrency < 1:
        raise UsageError("--concurrency must be at least 1")
    if options.max_retries < 0:
        raise UsageError("--max-retries must be 0 or more")
    if not (0 < options.timeout < float("inf")):  # NaN fails this too
        raise UsageError("--timeout must be a positive number of seconds")
    for provider in (options.provider, *(pair[0] for pair in options.compare_models)):
        if provider is not None and provider not in API_KEY_ENV:
            raise UsageError(f"unknown provider {provider!r}: use openai or anthropic")


def _warnings(plans: Sequence[JudgePlan], cache: VerdictCache | None,
              sending: _Sending) -> tuple[str, ...]:
    """What the user should know that does not change the exit code, one line each."""
    warnings = list(dict.fromkeys(plan.ignored_temperature for plan in plans
                                  if plan.ignored_temperature))
    if sending.batch is not None:
        warnings += sending.batch.warnings
    if cache is not None:
        warnings += cache.warnings
    if sending.worker is not None and sending.worker.claims is not None:
        warnings += sending.worker.claims.warnings
    return tuple(warning for warning in warnings if warning)


class _Sending:
    """The part of a run that sends: on the event loop, with the cache used from a worker
    thread, the dispatcher the options ask for, and a settler for what comes back."""

    def __init__(self, start: RunStart, ledger: RunLedger, options: EvalOptions,
                 factory: ProviderFactory, batch_events: BatchEvents | None) -> None:
        self.start = start
        self.ledger = ledger
        self.options = options
        self.factory = factory
        self.batch_events = batch_events
        self.worker: CacheWorker | None = None
        #: Why the provider refused requests as wrong, one line per provider and model.
        self.refusals: dict[tuple[str, str, str], str] = {}
        #: What ``--batch`` sent and left running (``None``: a direct run).
        self.batch: BatchRunResult | None = None
        self._batcher: BatchDispatcher | None = None

    async def run(self) -> None:
        """Make the calls, settling every sample (the ledger then has them all)."""
        from introspection_cli.evaluation.cache_worker import CacheWorker
        from introspection_cli.evaluation.claims import ClaimBoard

        cache = self.start.cache
        # Only a cache this run can write is worth claiming requests in: a run that
        # cannot save its verdicts cannot give them to another.
        claims = (ClaimBoard(cache.path.parent) if cache is not None and cache.writable
                  else None)
        self.worker = worker = CacheWorker(cache, claims) if cache is not None else None
        try:
            rows = self.start.rows(worker, self.ledger)
            try:
                await rows.read_to_first_misses()
                await self._send(rows, self.start.settings_for(rows.first), worker)
            finally:
                await rows.aclose()
        finally:
            if worker is not None:
                await worker.aclose()

    async def _send(self, rows: ProviderRows, settings: Mapping[str, ProviderSettings],
                    worker: CacheWorker | None) -> None:
        settler = Settler(self.ledger, worker, batch=self.options.batch is not None)
        self.refusals = settler.refusals
        dispatcher = self._dispatcher(settler, worker)
        self.ledger.senders.append(dispatcher)
        try:
            await dispatcher.run(rows, settings)
        finally:
            # From here on, the run's usage counts what the dispatcher counted.
            self.ledger.senders.remove(dispatcher)
            dispatcher.record_usage(self.ledger.usage)
            if self._batcher is not None:
                self.batch = self._batcher.result

    def _dispatcher(self, settler: Settler, worker: CacheWorker | None) -> Dispatcher:
        """How the uncached samples are sent: in batches, or one call each."""
        def new_waiting() -> Waiting | None:
            """Where samples other runs are asking for wait; None without claims."""
            if worker is None or worker.claims is None:
                return None
            from introspection_cli.evaluation.sharing import Waiting

            waiting = Waiting(worker, settler.settle_shared)
            self.ledger.waiting.append(waiting)
            return waiting

        if self.options.batch is not None:
            from introspection_cli.evaluation.batch.dispatcher import BatchDispatcher

            self._batcher = BatchDispatcher(
                self.options.batch, settler.settle,
                store_dir=self.options.cache_dir or default_cache_dir(), cache=worker,
                usage=self.ledger.usage, new_waiting=new_waiting, events=self.batch_events)
            return self._batcher
        from introspection_cli.evaluation.dispatch import DirectDispatcher
        from introspection_cli.evaluation.sharing import shared_rows

        def shared(rows: AsyncIterator[RowSlots]) -> AsyncIterator[RowSlots]:
            """``rows`` without the samples other runs are asking for: those wait for
            their verdicts (:mod:`.sharing`), or come back to be sent if let go."""
            waiting = new_waiting()
            return rows if waiting is None else shared_rows(rows, waiting)

        return DirectDispatcher(self.factory, settler.settle,
                                concurrency=self.options.concurrency, shared=shared,
                                started=self.ledger.report_progress)
