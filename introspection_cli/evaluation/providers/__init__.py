"""Model providers behind one interface, created by name.

The SDK behind a provider is imported only when that provider is created, so
``introspection check`` and fully cached eval runs never pay for importing
``openai`` (~0.4 s) or ``anthropic`` (~0.9 s).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from introspection_cli.evaluation.providers.interface import (
    ChatMessage,
    ModelReply,
    ModelRequest,
    Provider,
    ProviderAuthError,
    ProviderBadResponse,
    ProviderError,
    ProviderServiceError,
    ProviderSettings,
)

__all__ = [
    "API_KEY_ENV",
    "BASE_URL_ENV",
    "ChatMessage",
    "ModelReply",
    "ModelRequest",
    "Provider",
    "ProviderAuthError",
    "ProviderBadResponse",
    "ProviderError",
    "ProviderServiceError",
    "ProviderSettings",
    "create_provider",
    "resolve_endpoint",
]

#: The environment variable holding each provider's API key.
API_KEY_ENV: Mapping[str, str] = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
#: The environment variable pointing each provider at a compatible server.
BASE_URL_ENV: Mapping[str, str] = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}
_DEFAULT_ENDPOINT: Mapping[str, str] = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
}


def resolve_endpoint(provider: str, environ: Mapping[str, str] | None = None) -> str:
    """The base URL ``provider`` will be called at (its ``*_BASE_URL`` or the default)."""
    env = os.environ if environ is None else environ
    url = env.get(BASE_URL_ENV[provider]) or _DEFAULT_ENDPOINT[provider]
    return url.rstrip("/")


def create_provider(provider: str, settings: ProviderSettings) -> Provider:
    """Build the ``provider`` client, importing its SDK now and not before."""
    if provider == "openai":
        from introspection_cli.evaluation.providers.openai_provider import OpenAIProvider

        return OpenAIProvider(settings)
    if provider == "anthropic":
        from introspection_cli.evaluation.providers.anthropic_provider import AnthropicProvider

        return AnthropicProvider(settings)
    raise ValueError(f"unknown provider {provider!r}")
