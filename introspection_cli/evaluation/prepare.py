"""What a run does before its first call, so that the first one goes out soon and none is wasted.

In order:

1. Find every row by memo (:func:`~introspection_cli.evaluation.slots.remembered_rows`),
   read on the calling thread: a re-run whose every verdict is cached is then done,
   and starts no event loop.
2. Otherwise import the SDK of each provider a call is expected from, before the
   event loop starts (an import inside the running loop was measured slower), and
   start reading the CA store on a thread, which overlaps with the first prompts'
   rendering.
3. Read each provider's rows (:class:`ProviderRows`) up to its first miss in the
   cache: then it is known which providers will be called, and their API keys are
   checked (:meth:`RunStart.settings_for`) before any call, while no row after a
   provider's first miss has been rendered yet.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from introspection_cli.errors import ConfigError
from introspection_cli.evaluation.plan import JudgePlan
from introspection_cli.evaluation.providers import (
    API_KEY_ENV,
    BASE_URL_ENV,
    ProviderSettings,
    resolve_endpoint,
)
from introspection_cli.evaluation.run_ledger import RunLedger
from introspection_cli.evaluation.slots import RowSlots, remembered_rows, row_slots

if TYPE_CHECKING:  # the event loop's side of a run: loaded only when it sends
    import ssl
    from concurrent.futures import Future

    from introspection_cli.evaluation.cache import VerdictCache
    from introspection_cli.evaluation.cache_worker import CacheWorker

#: Imports a provider's SDK ahead of the run (``import_provider``), by provider name.
SdkPreload = Callable[[str], object]


class RunStart:
    """The prepare step of one run: its plans, options, cache and environment."""

    def __init__(self, plans: Sequence[JudgePlan], *, samples: int,
                 cache: VerdictCache | None, env: Mapping[str, str],
                 max_retries: int, timeout: float, preload: SdkPreload | None) -> None:
        self.plans = plans
        self.samples = samples
        self.cache = cache
        self.env = env
        self._max_retries = max_retries
        self._timeout = timeout
        self._preload = preload
        #: The provider with the first row :meth:`found_by_memo` did not find.
        self._not_remembered: str | None = None
        #: The run's TLS context, being read on a thread once an SDK is imported early.
        self._tls_context: Future[ssl.SSLContext] | None = None

    def providers(self) -> list[str]:
        """The providers of the run's plans, in order."""
        return list(dict.fromkeys(plan.provider for plan in self.plans))

    def plans_of(self, provider: str) -> list[JudgePlan]:
        return [plan for plan in self.plans if plan.provider == provider]

    def found_by_memo(self, ledger: RunLedger) -> bool:
        """Take every row from the cache by memo when every sample of every row is there,
        read on this thread with no event loop, and close the cache; False, having taken
        nothing, as soon as one is not."""
        if self.cache is None:
            return False
        found: list[RowSlots] = []
        for name in self.providers():
            rows = remembered_rows(self.plans_of(name), provider=name,
                                   endpoint=resolve_endpoint(name, self.env),
                                   samples=self.samples, cache=self.cache)
            if rows is None:
                self._not_remembered = name
                return False
            found += rows
        ledger.track_all(found)
        self.cache.close()
        ledger.report_progress()
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
        if self._preload is None:  # providers that load no SDK
            return
        imported = False
        for name in dict.fromkeys(self._expected_calls()):
            if name in API_KEY_ENV and self.env.get(API_KEY_ENV[name], "").strip():
                self._preload(name)
                imported = True
        if imported:
            self._read_tls_context_soon()

    def _expected_calls(self) -> list[str]:
        """The providers a call is expected from (see :meth:`import_sdks`)."""
        from introspection_cli.evaluation.memo import code_digest

        if self.cache is None:
            return [plan.provider for plan in self.plans
                    if any(row.calls_model for row in plan.rows)]
        missed = self._not_remembered
        if missed is not None and code_digest() is not None and any(
                row.calls_model and row.snapshot_hash is not None
                for plan in self.plans_of(missed) for row in plan.rows):
            return [missed]
        return []

    def _read_tls_context_soon(self) -> None:
        """Start reading the CA store on a thread (:func:`~introspection_cli.netenv.ssl_context`).

        OpenSSL parses the store without the GIL (20-27 ms here), so it overlaps with
        the first prompts' rendering; :meth:`settings_for` takes the context, or the
        error a bad ``SSL_CERT_FILE`` raises, where it would otherwise have read it.
        Started after the SDK's import, so the thread imports nothing.
        """
        from concurrent.futures import ThreadPoolExecutor

        from introspection_cli.netenv import ssl_context

        reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tls-context")
        self._tls_context = reader.submit(ssl_context, self.env)
        reader.shutdown(wait=False)

    def rows(self, cache: CacheWorker | None, ledger: RunLedger) -> ProviderRows:
        """Each provider's rows as the run reads them, each kept by ``ledger``."""
        return ProviderRows({name: _tracked(row_slots(
            self.plans_of(name), provider=name, endpoint=resolve_endpoint(name, self.env),
            samples=self.samples, cache=cache), ledger) for name in self.providers()})

    def settings_for(self, first: Mapping[str, Sequence[RowSlots]]
                     ) -> dict[str, ProviderSettings]:
        """Each provider ``first`` needs to call, with its key; a missing key stops the run."""
        wanted: dict[str, ProviderSettings] = {}
        for name, rows in first.items():
            if not any(slot.result is None for samples in rows for slot in samples):
                continue  # every row of this provider is in the cache
            key = self.env.get(API_KEY_ENV[name], "").strip()
            if not key:
                judges = dict.fromkeys(plan.judge.name for plan in self.plans_of(name))
                raise ConfigError(
                    f"{API_KEY_ENV[name]} is not set, and judge(s) {', '.join(judges)} need "
                    f"the {name} provider for rows not in the cache; export {API_KEY_ENV[name]} "
                    f"(for a local compatible server set {BASE_URL_ENV[name]} and any "
                    "non-empty key)")
            wanted[name] = provider_settings(
                name, key, self.env, max_retries=self._max_retries, timeout=self._timeout,
                verify=self._tls_context.result() if self._tls_context is not None else None)
        return wanted


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


class ProviderRows:
    """Each provider's rows, read up to its first miss by :meth:`read_to_first_misses`
    (``first``), then the rest as the dispatcher asks for them (:meth:`of`)."""

    def __init__(self, streams: Mapping[str, AsyncGenerator[RowSlots, None]]) -> None:
        self._streams = streams
        #: Each provider's rows read so far, up to and with its first that needs a call
        #: (every row of a provider whose rows are all cached).
        self.first: dict[str, list[RowSlots]] = {}

    async def read_to_first_misses(self) -> None:
        """Read each provider's rows up to its first one needing a call, leaving the rest
        unread."""
        for name, rows in self._streams.items():
            first: list[RowSlots] = []
            async for samples in rows:
                first.append(samples)
                if any(slot.result is None for slot in samples):
                    break
            self.first[name] = first

    def of(self, provider: str) -> AsyncIterator[RowSlots]:
        """All of ``provider``'s rows: those read already, then the rest."""
        return _chain(self.first.get(provider, ()), self._streams[provider])

    async def aclose(self) -> None:
        for rows in self._streams.values():
            await rows.aclose()


async def _tracked(rows: AsyncIterator[RowSlots], ledger: RunLedger
                   ) -> AsyncGenerator[RowSlots, None]:
    """``rows``, each kept for the report and counted as done or pending."""
    async for samples in rows:
        ledger.track(samples)
        yield samples


async def _chain(first: Sequence[RowSlots],
                 rest: AsyncIterator[RowSlots]) -> AsyncIterator[RowSlots]:
    for samples in first:
        yield samples
    async for samples in rest:
        yield samples
