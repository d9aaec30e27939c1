"""Running judges over their calibration rows: the core of ``introspection judges eval``.

The run is planned first (judges, verified rows, gate decisions). A re-run
whose every row is found in the cache by memo (:mod:`.memo`) is then done: its
rows are read on this thread and no event loop starts. Otherwise each
provider's rows are rendered and looked up in the cache
(:mod:`~introspection_cli.evaluation.slots`) up to its first miss, which tells
which providers will actually be called, so their API keys are checked before
any call. A :class:`~introspection_cli.evaluation.dispatch.Dispatcher` per
provider then sends the samples not in the cache while the remaining rows are
rendered (or, with ``--batch``, all of them go through the providers' batch APIs:
:mod:`.batch`), and every sample is settled here: a verdict (cached), or an error with
its reason. One bad reply never aborts the run; a rejected API key does, since no
later call can succeed either.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from introspection_cli.errors import ConfigError, UsageError
from introspection_cli.evaluation.cache import VerdictCache, default_cache_dir
from introspection_cli.evaluation.fingerprint import judge_fingerprint
from introspection_cli.evaluation.gate import DEFAULT_REGEX_TIMEOUT
from introspection_cli.evaluation.outcomes import EvalRun, JudgeRun, RowOutcome, Usage, total_tokens
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
    Provider,
    ProviderAuthError,
    ProviderBadResponse,
    ProviderError,
    ProviderRefused,
    ProviderSettings,
    create_provider,
    import_provider,
    resolve_endpoint,
)
from introspection_cli.evaluation.slots import RowSlots, Slot, remembered_rows, row_slots
from introspection_cli.evaluation.stopped import AuthAbort, ProviderStopped, ResultNotCollected
from introspection_cli.evaluation.verdict import (
    InvalidReply,
    ParsedVerdict,
    parse_reply,
    reply_tokens,
)
from introspection_cli.evaluation.voting import SampleResult, decide
from introspection_cli.gcpause import collector_paused
from introspection_cli.recipe.model import Recipe

if TYPE_CHECKING:  # the event loop's side of a run, and --batch's: loaded only when needed
    import ssl
    from concurrent.futures import Future

    from introspection_cli.evaluation.batch import BatchEvents, BatchOptions, BatchRunResult
    from introspection_cli.evaluation.cache_worker import CacheWorker
    from introspection_cli.evaluation.dispatch import Dispatcher
    from introspection_cli.evaluation.limits import AdaptiveLimiter
    from introspection_cli.evaluation.sharing import Waiting

ProviderFactory = Callable[[str, ProviderSettings], Provider]


@dataclass(frozen=True, slots=True)
class RunProgress:
    """How far a run is: what a progress display shows."""

    rows_done: int
    rows_total: int
    #: Model calls made so far (with ``--batch``: batch results collected).
    requests: int = 0
    #: Samples answered from the verdict cache.
    cache_hits: int = 0
    #: Samples that ended as errors so far (a provider failure, an unusable reply).
    errors: int = 0
    #: Samples waiting for the verdict another run on the same cache is asking for.
    waiting: int = 0


#: Called with the run's progress as rows finish.
ProgressCallback = Callable[[RunProgress], None]


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
             batch_events: BatchEvents | None = None) -> EvalResult:
    """Evaluate the chosen judges of ``recipe`` and return every row's outcome."""
    plans = make_plans(recipe, options)
    return run_plans(str(recipe.root), plans, options, progress=progress,
                     provider_factory=provider_factory, environ=environ,
                     batch_events=batch_events)


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
              batch_events: BatchEvents | None = None) -> EvalResult:
    """Run judge plans made already (``judges estimate`` plans unlabelled rows itself)."""
    import os

    env = os.environ if environ is None else environ
    _check_options(options)
    # Only a model comparison reports what the rows' cached replies used.
    cache = (VerdictCache(options.cache_dir or default_cache_dir(),
                          read_tokens=bool(options.compare_models))
             if options.use_cache else None)
    execution = _Execution(plans, options, cache, env, provider_factory, progress,
                           batch_events)
    # Read on this thread, nothing sent: every slot and outcome lives for the run, and
    # none is in a cycle, so the collector's passes over them would free nothing.
    with collector_paused(freeze=True):
        remembered = options.batch is None and execution.found_by_memo()
    if not remembered:
        import asyncio  # here: a run whose every verdict is found by memo needs no loop

        if options.batch is None:
            execution.import_sdks()

        # The coroutine returns nothing: on Python 3.11, asyncio.run formats the main
        # task's repr, its result included, when it puts back the SIGINT handler (twice),
        # and the repr of a 4,000-row EvalRun took 25 ms each time.
        asyncio.run(execution.run())
    with collector_paused(freeze=remembered):
        run = execution.eval_run(recipe)
    warnings = list(dict.fromkeys(plan.ignored_temperature for plan in plans
                                  if plan.ignored_temperature))
    batch = execution.batch_result
    if batch is not None:
        warnings += batch.warnings
    if cache is not None:
        warnings += cache.warnings
    if execution.worker is not None and execution.worker.claims is not None:
        warnings += execution.worker.claims.warnings
    return EvalResult(run, execution.service_failures,
                      cache.write_failures if cache is not None else 0,
                      tuple(w for w in warnings if w), execution.refused,
                      tuple(execution.refusals.values()),
                      batch.still_running if batch is not None else ())


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
        #: Each plan's own usage (judge x model), by id(plan).
        self.plan_usage: dict[int, Usage] = {id(plan): Usage() for plan in plans}
        self.service_failures = 0
        self.refused = 0
        self.refusals: dict[tuple[str, str, str], str] = {}
        self.slots: list[Slot] = []
        self.rows_total = sum(len(plan.rows) for plan in plans)
        # Gated rows and gate errors make no call: they are done before anything runs.
        self.rows_done = sum(1 for plan in plans for row in plan.rows if not row.calls_model)
        self.rows_pending: dict[int, int] = {}
        self.sample_errors = 0
        self.limiters: dict[str, AdaptiveLimiter] = {}
        self.dispatchers: list[Dispatcher] = []
        self.worker: CacheWorker | None = None
        #: Samples waiting for other runs' verdicts, a group per provider.
        self.waiting: list[Waiting] = []
        self.batch_events = batch_events
        #: What ``--batch`` sent and left running (``None``: a direct run).
        self.batch_result: BatchRunResult | None = None
        #: The provider with the first row :meth:`found_by_memo` did not find.
        self.not_remembered: str | None = None
        #: The run's TLS context, being read on a thread once an SDK is imported early.
        self.tls_context: Future[ssl.SSLContext] | None = None

    def found_by_memo(self) -> bool:
        """Take every row from the cache by memo when every sample of every row is there
        (:func:`~introspection_cli.evaluation.slots.remembered_rows`), read on this
        thread with no event loop, and close the cache; False, having taken nothing, as
        soon as one is not."""
        if self.cache is None:
            return False
        found: list[RowSlots] = []
        for name in dict.fromkeys(plan.provider for plan in self.plans):
            rows = remembered_rows([plan for plan in self.plans if plan.provider == name],
                                   provider=name, endpoint=resolve_endpoint(name, self.env),
                                   samples=self.options.samples, cache=self.cache)
            if rows is None:
                self.not_remembered = name
                return False
            found += rows
        for samples in found:
            self._track(samples)
        self.cache.close()
        self._report_progress()
        return True

    def import_sdks(self) -> None:
        """Import, before the event loop starts, the SDK of each provider a call is
        expected from: without a cache, every provider with a row to call; else the one
        whose row's memo missed (a row without memos, as ``judges estimate``'s, says
        nothing: its SDK is imported when a call is known to be needed, as before).

        A memo that misses usually means a call (after an upgrade, which changes every
        memo, the rows may still be found by key, and then the import was not needed).
        The same import costs more later: the openai SDK's took 335-340 ms here and
        395-400 ms once the loop was running and the first prompts rendered (every one
        of its modules somewhat slower; why is not established), so a 400-row cold run
        ends about 45 ms sooner (BENCHMARKS.md). A provider whose API key is not set is
        left to the key check, which stops the run if the provider is needed at all.
        """
        if self.factory is not create_provider:  # a test's providers: no SDK to load
            return
        from introspection_cli.evaluation.memo import code_digest

        if self.cache is None:
            expected = [plan.provider for plan in self.plans
                        if any(row.calls_model for row in plan.rows)]
        elif self.not_remembered is not None and code_digest() is not None and any(
                row.calls_model and row.snapshot_hash is not None
                for plan in self.plans if plan.provider == self.not_remembered
                for row in plan.rows):
            expected = [self.not_remembered]
        else:
            expected = []
        imported = False
        for name in dict.fromkeys(expected):
            if name in API_KEY_ENV and self.env.get(API_KEY_ENV[name], "").strip():
                import_provider(name)
                imported = True
        if imported:
            self._read_tls_context_soon()

    def _read_tls_context_soon(self) -> None:
        """Start reading the CA store on a thread (:func:`~introspection_cli.netenv.ssl_context`).

        OpenSSL parses the store without the GIL (20-27 ms here), so it overlaps with
        the first prompts' rendering; :meth:`_settings_for` takes the context, or the
        error a bad ``SSL_CERT_FILE`` raises, where it would otherwise have read it.
        Started after the SDK's import, so the thread imports nothing.
        """
        from concurrent.futures import ThreadPoolExecutor

        from introspection_cli.netenv import ssl_context

        reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tls-context")
        self.tls_context = reader.submit(ssl_context, self.env)
        reader.shutdown(wait=False)

    async def run(self) -> None:
        """Make the calls, settling every sample (:meth:`eval_run` then has the outcomes)."""
        from introspection_cli.evaluation.cache_worker import CacheWorker
        from introspection_cli.evaluation.claims import ClaimBoard

        # Only a cache this run can write is worth claiming requests in: a run that
        # cannot save its verdicts cannot give them to another.
        claims = (ClaimBoard(self.cache.path.parent) if self.cache is not None
                  and self.cache.writable else None)
        self.worker = worker = CacheWorker(self.cache, claims) if self.cache is not None else None
        try:
            await self._run(worker)
        finally:
            if worker is not None:
                await worker.aclose()

    def eval_run(self, recipe: str) -> EvalRun:
        """Every plan's row outcomes and the usage, once :meth:`run` has finished."""
        usage = self.usage
        usage.requests += sum(dispatcher.requests for dispatcher in self.dispatchers)
        limits = [limiter.limit for limiter in self.limiters.values()]
        usage.concurrency = min(limits) if limits else None
        usage.rate_limited = sum(limiter.rate_limited for limiter in self.limiters.values())
        # One pass over the slots finds every plan's rows' samples.
        samples_by_row: dict[tuple[int, int], list[SampleResult]] = {}
        for slot in self.slots:
            if slot.result is not None:
                samples_by_row.setdefault((id(slot.plan), id(slot.row)), []).append(slot.result)
        return EvalRun(recipe, tuple(self._judge_run(plan, samples_by_row)
                                     for plan in self.plans), usage, self.options.samples)

    async def _run(self, worker: CacheWorker | None) -> None:
        import asyncio

        names = list(dict.fromkeys(plan.provider for plan in self.plans))
        streams = {name: self._tracked(row_slots(
            [plan for plan in self.plans if plan.provider == name], provider=name,
            endpoint=resolve_endpoint(name, self.env), samples=self.options.samples,
            cache=worker)) for name in names}
        first = {name: await _until_first_miss(streams[name]) for name in names}
        if self.options.batch is not None:
            try:
                await self._send_in_batches(self.options.batch, first, streams)
            finally:
                for rows in streams.values():
                    await rows.aclose()
            return
        providers = self._providers_for(first, streams)
        self._report_progress()
        try:
            async with asyncio.TaskGroup() as group:
                for name, provider in providers.items():
                    group.create_task(self._dispatcher(name, provider).run(
                        self._shared(_chain(first[name], streams[name]))))
        except BaseExceptionGroup as failed:
            # Task groups nest (one per provider): what failed is the first leaf.
            error = _first_leaf(failed)
            if isinstance(error, AuthAbort):
                raise ConfigError(f"{error.error}; the run was stopped before calling the "
                                  "model for the remaining rows") from error.error
            raise error from None
        finally:
            for provider in providers.values():
                await provider.aclose()
            for rows in streams.values():
                await rows.aclose()

    def _dispatcher(self, name: str, provider: Provider) -> Dispatcher:
        """How ``name``'s uncached samples are sent (the place for another way of sending)."""
        from introspection_cli.evaluation.dispatch import DirectDispatcher

        dispatcher = DirectDispatcher(provider, self.settle, limiter=self.limiters[name])
        self.dispatchers.append(dispatcher)
        return dispatcher

    def _shared(self, rows: AsyncIterator[RowSlots]) -> AsyncIterator[RowSlots]:
        """``rows`` without the samples other runs are asking for: those wait for their
        verdicts (:mod:`.sharing`), or come back to be sent if let go."""
        from introspection_cli.evaluation.sharing import shared_rows

        waiting = self._new_waiting()
        return rows if waiting is None else shared_rows(rows, waiting)

    def _new_waiting(self) -> Waiting | None:
        """Where samples other runs are asking for wait; None without claims."""
        if self.worker is None or self.worker.claims is None:
            return None
        from introspection_cli.evaluation.sharing import Waiting

        waiting = Waiting(self.worker, self.settle_shared)
        self.waiting.append(waiting)
        return waiting

    def settle_shared(self, slot: Slot, verdict: ParsedVerdict) -> None:
        """Settle a sample with the verdict another run wrote to the cache: a cache hit."""
        if slot.result is not None:
            return
        slot.result, slot.request = SampleResult(verdict, cached=True), None
        self.usage.cached += 1
        self.plan_usage[id(slot.plan)].cached += 1
        self._row_settled(slot.row)

    async def _tracked(self, rows: AsyncIterator[RowSlots]) -> AsyncGenerator[RowSlots, None]:
        """``rows``, each kept for the report and counted as done or pending."""
        async for samples in rows:
            self._track(samples)
            yield samples

    def _track(self, samples: RowSlots) -> None:
        """Keep a row's samples for the report; count it as done or pending."""
        self.slots += samples
        hits = pending = 0
        for slot in samples:
            if slot.result is None:
                pending += 1
            elif slot.result.cached:
                hits += 1
        self.usage.cached += hits
        if samples:
            self.plan_usage[id(samples[0].plan)].cached += hits
        if pending:
            self.rows_pending[id(samples[0].row)] = pending
        else:
            self.rows_done += 1

    def _providers_for(self, first: Mapping[str, Sequence[RowSlots]],
                       streams: Mapping[str, AsyncIterator[RowSlots]]) -> dict[str, Provider]:
        """Create the providers that will be called; a missing key stops the run here."""
        from introspection_cli.evaluation.limits import AdaptiveLimiter

        providers: dict[str, Provider] = {}
        for name, settings in self._settings_for(first).items():
            limiter = AdaptiveLimiter(self.options.concurrency)
            self.limiters[name] = limiter
            providers[name] = self.factory(name, replace(
                settings, on_rate_limit=limiter.saw_rate_limit))
        return providers

    def _settings_for(self, first: Mapping[str, Sequence[RowSlots]]
                      ) -> dict[str, ProviderSettings]:
        """Each provider ``first`` needs to call, with its key; a missing key stops the run."""
        wanted: dict[str, ProviderSettings] = {}
        for name, rows in first.items():
            if not any(slot.result is None for samples in rows for slot in samples):
                continue  # every row of this provider is in the cache
            key = self.env.get(API_KEY_ENV[name], "").strip()
            if not key:
                judges = dict.fromkeys(plan.judge.name for plan in self.plans
                                       if plan.provider == name)
                raise ConfigError(
                    f"{API_KEY_ENV[name]} is not set, and judge(s) {', '.join(judges)} need "
                    f"the {name} provider for rows not in the cache; export {API_KEY_ENV[name]} "
                    f"(for a local compatible server set {BASE_URL_ENV[name]} and any "
                    "non-empty key)")
            wanted[name] = provider_settings(
                name, key, self.env, max_retries=self.options.max_retries,
                timeout=self.options.timeout,
                verify=self.tls_context.result() if self.tls_context is not None else None)
        return wanted

    async def _send_in_batches(self, options: BatchOptions,
                               first: Mapping[str, Sequence[RowSlots]],
                               streams: Mapping[str, AsyncIterator[RowSlots]]) -> None:
        """Every uncached sample through its provider's batch API (``--batch``)."""
        from introspection_cli.evaluation.batch import BatchItem, NoBatchApi
        from introspection_cli.evaluation.batch.dispatch import send_in_batches
        from introspection_cli.evaluation.batch.sink import SlotSink
        from introspection_cli.evaluation.sharing import BatchWaiting

        rows = {name: [*first[name], *[samples async for samples in streams[name]]]
                for name in first}
        settings = self._settings_for(rows)
        slots_by_key: dict[str, list[Slot]] = {}
        for slot in (slot for group in rows.values() for samples in group for slot in samples):
            if slot.result is None:
                slots_by_key.setdefault(slot.key, []).append(slot)
        items: dict[str, list[BatchItem]] = {}
        waiting = self._new_waiting()
        for key, slots in slots_by_key.items():
            if waiting is not None and any(slot.held_by is not None for slot in slots):
                for slot in slots:  # another run is asking for it: wait for its result
                    waiting.add(slot)
                continue
            assert slots[0].request is not None
            items.setdefault(slots[0].plan.provider, []).append(BatchItem(key,
                                                                          slots[0].request))
        sink = SlotSink(slots_by_key, self.settle, cache=self.worker, usage=self.usage)
        try:
            self.batch_result = await send_in_batches(
                items, settings, store_dir=self.options.cache_dir or default_cache_dir(),
                options=options, sink=sink, events=self.batch_events,
                waited=BatchWaiting(waiting) if waiting is not None else None)
        except ProviderAuthError as exc:
            raise ConfigError(f"{exc}; the run was stopped before collecting the remaining "
                              "rows") from exc
        except NoBatchApi as exc:
            raise ConfigError(str(exc)) from exc

    def settle(self, slot: Slot, reply: ModelReply | ProviderError,
               parsed: ParsedVerdict | InvalidReply | None = None) -> None:
        """Turn a call's reply or error into the slot's result (and cache a verdict);
        ``parsed`` is the reply's verdict when it has been parsed already (a batch's)."""
        if slot.result is not None:
            return  # a batch's result for a sample another run's verdict settled first
        # Sent and answered: a stopped sample never was, an uncollected one is counted
        # by the run that collects it.
        if not isinstance(reply, ProviderStopped | ResultNotCollected):
            self.plan_usage[id(slot.plan)].requests += 1
            if self.options.batch is not None:  # every call of a --batch run is a batch's
                self.plan_usage[id(slot.plan)].batch_requests += 1
        if isinstance(reply, ProviderError):
            refused = isinstance(reply, ProviderRefused) or (
                isinstance(reply, ProviderStopped) and reply.refused)
            # Anything but a bad reply or a refusal is the provider failing (exit 3).
            service = not refused and not isinstance(reply, ProviderBadResponse)
            if isinstance(reply, ProviderRefused):
                self.refusals.setdefault(
                    (slot.plan.provider, reply.endpoint, slot.plan.model),
                    f"the {slot.plan.provider} provider refused requests for model "
                    f"{slot.plan.model} at {reply.endpoint} as wrong (HTTP {reply.status}): "
                    "check the model name and the judge's llm settings")
            slot.result = SampleResult(None, str(reply), service_failure=service,
                                       refused=refused)
            self.sample_errors += 1
            if self.worker is not None:
                self.worker.release(slot.key)  # another run may take it over
        else:
            self._count_tokens(reply, self.plan_usage[id(slot.plan)])
            if parsed is None:
                parsed = parse_reply(reply)
            if isinstance(parsed, ParsedVerdict):
                slot.result = SampleResult(parsed)
                if self.worker is not None:
                    self.worker.put(slot.key, parsed, slot.memo)
            else:
                slot.result = SampleResult(None, parsed.reason, reply_tokens=reply_tokens(reply))
                self.sample_errors += 1
                if self.worker is not None:
                    self.worker.release(slot.key)
        slot.request = None  # answered: its prompt is not needed any more
        self._row_settled(slot.row)

    def _count_tokens(self, reply: ModelReply, plan_usage: Usage) -> None:
        for usage in (self.usage, plan_usage):
            usage.input_tokens += reply.input_tokens
            usage.output_tokens += reply.output_tokens
            usage.cached_input_tokens += reply.cached_input_tokens
            usage.cache_write_tokens += reply.cache_write_tokens

    def _row_settled(self, row: PlannedRow) -> None:
        self.rows_pending[id(row)] -= 1
        if self.rows_pending[id(row)] == 0:
            self.rows_done += 1
            self._report_progress()

    def _report_progress(self) -> None:
        if self.progress is not None:
            requests = self.usage.requests + sum(d.requests for d in self.dispatchers)
            self.progress(RunProgress(self.rows_done, self.rows_total, requests,
                                      self.usage.cached, self.sample_errors,
                                      sum(len(waiting) for waiting in self.waiting)))

    def _judge_run(self, plan: JudgePlan,
                   samples_by_row: Mapping[tuple[int, int], list[SampleResult]]) -> JudgeRun:
        rows = tuple(self._row_outcome(row, samples_by_row.get((id(plan), id(row)), ()))
                     for row in plan.rows)
        return JudgeRun(plan.judge.name, plan.provider, plan.model, rows, plan.rejected,
                        fingerprint=judge_fingerprint(plan.judge, provider=plan.provider,
                                                      model=plan.model),
                        held_out=plan.held_out, usage=self.plan_usage[id(plan)])

    def _row_outcome(self, row: PlannedRow, samples: Sequence[SampleResult]) -> RowOutcome:
        if row.gate_error is not None:
            return RowOutcome(row.line, row.conversation_id, row.split, row.expected, "error",
                              error=row.gate_error, snapshot_hash=row.snapshot_hash)
        if row.gated:
            return RowOutcome(row.line, row.conversation_id, row.split, row.expected, "gated",
                              snapshot_hash=row.snapshot_hash)
        if len(samples) == 1 and samples[0].verdict is not None:  # the usual row: one verdict
            only, verdict = samples[0], samples[0].verdict
            return RowOutcome(row.line, row.conversation_id, row.split, row.expected,
                              verdict.verdict, samples=(verdict.verdict,),
                              reasoning=verdict.reasoning, cached=only.cached,
                              snapshot_hash=row.snapshot_hash, tokens=verdict.tokens)
        decision = decide(samples)
        if decision.outcome == "error":
            if any(s.refused for s in samples):
                self.refused += 1
            elif any(s.service_failure for s in samples):
                self.service_failures += 1
        return RowOutcome(row.line, row.conversation_id, row.split, row.expected,
                          decision.outcome, samples=tuple(s.outcome for s in samples),
                          unstable=decision.unstable, reasoning=decision.reasoning,
                          error=decision.error,
                          cached=bool(samples) and all(s.cached for s in samples),
                          snapshot_hash=row.snapshot_hash,
                          tokens=total_tokens(s.tokens for s in samples))


def provider_settings(name: str, key: str, env: Mapping[str, str], *, max_retries: int,
                      timeout: float, verify: ssl.SSLContext | None = None) -> ProviderSettings:
    """How to build ``name``'s client with ``key``: its endpoint, the proxy the environment
    names for it (a loopback endpoint: never one) and the CAs to verify TLS with (``verify``,
    else the environment's), for whatever the client reaches over TLS: an https endpoint,
    an https proxy, or an http endpoint's redirect to https (the SDKs follow redirects)."""
    from introspection_cli.netenv import proxy_for, ssl_context

    endpoint = resolve_endpoint(name, env)
    proxy = proxy_for(endpoint, env)
    return ProviderSettings(key, endpoint, max_retries, timeout,
                            proxy=proxy.url if proxy is not None else None,
                            verify=verify if verify is not None else ssl_context(env))


def _first_leaf(group: BaseExceptionGroup[Any]) -> BaseException:
    """The first exception in ``group`` that is not a group (task groups nest)."""
    first = group.exceptions[0]
    return _first_leaf(first) if isinstance(first, BaseExceptionGroup) else first


async def _until_first_miss(rows: AsyncIterator[RowSlots]) -> list[RowSlots]:
    """Read a provider's rows up to its first one needing a call, leaving the rest unread.

    Then it is known which providers will be called, so every API key is checked
    before the first call, yet no row after a provider's first miss has been
    rendered. A provider whose rows are all cached is read to the end.
    """
    first: list[RowSlots] = []
    async for samples in rows:
        first.append(samples)
        if any(slot.result is None for slot in samples):
            break
    return first


async def _chain(first: Sequence[RowSlots],
                 rest: AsyncIterator[RowSlots]) -> AsyncIterator[RowSlots]:
    for samples in first:
        yield samples
    async for samples in rest:
        yield samples
