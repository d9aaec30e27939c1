"""What the two SDK-backed providers share: the client's settings, endpoint and close.

The ``openai`` and ``anthropic`` SDKs are generated from the same template, so
their async clients take the same options and have the same ``base_url`` and
``close()``; only the call and the reply differ, in each provider's module.
"""

from __future__ import annotations

from typing import Any

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
    def client_options(settings: ProviderSettings) -> dict[str, Any]:
        """The client arguments both SDKs take. The key is always passed explicitly:
        without it the anthropic SDK falls back to profile files on disk."""
        return {"api_key": settings.api_key, "base_url": settings.base_url,
                "max_retries": settings.max_retries, "timeout": settings.timeout}

    @property
    def endpoint(self) -> str:
        return without_userinfo(str(self._client.base_url).rstrip("/"))

    async def aclose(self) -> None:
        await self._client.close()
