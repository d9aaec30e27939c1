"""What the two SDK-backed providers share: the client's settings, endpoint and close.

The ``openai`` and ``anthropic`` SDKs are generated from the same template, so
their async clients take the same options and have the same ``base_url`` and
``close()``; only the call and the reply differ, in each provider's module.

The HTTP client under the SDK is built here (:mod:`.http_client`): replies are
bounded in bytes and time, the proxy and CAs are the ones the environment asks
for, and every response is seen before the SDK acts on it, so a 429 is reported
to the run's concurrency limiter (the SDK then retries it as it always does).
"""

from __future__ import annotations

import email.utils
import time
from types import ModuleType
from typing import Any

import httpx2

from introspection_cli.evaluation.providers.http_client import (
    REPLY_LIMIT,
    ResponseHook,
    sdk_http_client,
)
from introspection_cli.evaluation.providers.interface import (
    Provider,
    ProviderSettings,
    without_userinfo,
)


class SdkProvider(Provider):
    """A provider calling an official SDK's async client, held in ``_client``."""

    _client: Any  # openai.AsyncOpenAI or anthropic.AsyncAnthropic

    def __init__(self, settings: ProviderSettings) -> None:
        self._settings = settings

    @staticmethod
    def client_options(settings: ProviderSettings, sdk: ModuleType, *,
                       reply_limit: int | None = None,
                       on_response: ResponseHook | None = None) -> dict[str, Any]:
        """The arguments of ``sdk``'s async client, its HTTP client included (through the
        settings' proxy and CAs; each reply capped at ``reply_limit`` bytes and the
        settings' timeout when given). The key is always passed explicitly: without it
        the anthropic SDK falls back to profile files on disk."""
        http_client = sdk_http_client(
            sdk, verify=settings.verify, proxy=settings.proxy, reply_limit=reply_limit,
            deadline=settings.timeout if reply_limit is not None else None,
            on_response=on_response)
        return {"api_key": settings.api_key, "base_url": settings.base_url,
                "max_retries": settings.max_retries, "timeout": settings.timeout,
                "http_client": http_client}

    def sdk_client_options(self, sdk: ModuleType) -> dict[str, Any]:
        """:meth:`client_options` for a direct call: replies bounded, 429s observed."""
        return self.client_options(self._settings, sdk, reply_limit=REPLY_LIMIT,
                                   on_response=self._observe)

    async def _observe(self, response: httpx2.Response) -> None:
        listener = self._settings.on_rate_limit
        if response.status_code == 429 and listener is not None:
            listener(retry_after(response.headers))

    @property
    def endpoint(self) -> str:
        return without_userinfo(str(self._client.base_url).rstrip("/"))

    async def aclose(self) -> None:
        await self._client.close()


def retry_after(headers: httpx2.Headers) -> float | None:
    """The wait a 429 asks for, in seconds: ``retry-after-ms`` (as the SDKs read it),
    else ``retry-after`` in seconds or as an HTTP date; ``None`` without either."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            seconds = float(raw) * scale
        except ValueError:
            if name == "retry-after-ms":
                continue
            try:
                when = email.utils.parsedate_to_datetime(raw)
            except (TypeError, ValueError):
                continue
            seconds = when.timestamp() - time.time()
        if seconds == seconds:  # not NaN
            return max(0.0, seconds)
    return None
