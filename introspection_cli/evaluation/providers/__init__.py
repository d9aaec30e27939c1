"""Model providers behind one interface, created by name.

The SDK behind a provider is imported only when a run expects to call it
(:func:`import_provider`, when a row's memo misses) or creates it, so
``introspection check`` and eval runs found by memo never pay for importing
``openai`` (~0.4 s) or ``anthropic`` (~0.9 s).
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

from introspection_cli.evaluation.providers.interface import (
    ChatMessage,
    ModelReply,
    ModelRequest,
    Provider,
    ProviderAuthError,
    ProviderBadResponse,
    ProviderCertificateError,
    ProviderError,
    ProviderRefused,
    ProviderServiceError,
    ProviderSettings,
    ProviderUnreachable,
    RateLimitListener,
)

if TYPE_CHECKING:  # imports the HTTP stack: only with the SDK
    from introspection_cli.evaluation.providers.sdk_client import SdkProvider

__all__ = [
    "API_KEY_ENV",
    "BASE_URL_ENV",
    "TAKES_TEMPERATURE",
    "ChatMessage",
    "ModelReply",
    "ModelRequest",
    "Provider",
    "ProviderAuthError",
    "ProviderBadResponse",
    "ProviderCertificateError",
    "ProviderError",
    "ProviderFactory",
    "ProviderRefused",
    "ProviderServiceError",
    "ProviderSettings",
    "ProviderUnreachable",
    "RateLimitListener",
    "create_provider",
    "import_provider",
    "resolve_endpoint",
    "sdk_import",
]

#: The environment variable holding each provider's API key.
API_KEY_ENV: Mapping[str, str] = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
#: The environment variable pointing each provider at a compatible server.
BASE_URL_ENV: Mapping[str, str] = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}
#: Providers whose API takes a sampling temperature. Anthropic's Messages API removed
#: sampling parameters in API version 2026-10-21, and the anthropic SDK 2.x that sends it
#: has no ``temperature`` argument: a judge's temperature is not sent there.
TAKES_TEMPERATURE: frozenset[str] = frozenset({"openai"})
_DEFAULT_ENDPOINT: Mapping[str, str] = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
}


def resolve_endpoint(provider: str, environ: Mapping[str, str] | None = None) -> str:
    """The base URL ``provider`` will be called at (its ``*_BASE_URL`` or the default)."""
    env = os.environ if environ is None else environ
    url = env.get(BASE_URL_ENV[provider]) or _DEFAULT_ENDPOINT[provider]
    return url.rstrip("/")


#: Builds a provider by name: :func:`create_provider`, or a caller's own.
ProviderFactory = Callable[[str, ProviderSettings], Provider]


def create_provider(provider: str, settings: ProviderSettings) -> Provider:
    """Build the ``provider`` client, importing its SDK now if :func:`import_provider` has not."""
    # The client is built inside the import window too when the SDK is imported here:
    # building it imports the SDK's HTTP stack and its chat/messages resources lazily.
    with sdk_import(provider):  # each provider's SDK is the module of its name
        return import_provider(provider)(settings)


def import_provider(provider: str) -> type[SdkProvider]:
    """The class of ``provider``, its SDK imported now (once) and not before."""
    if provider == "openai":
        with sdk_import("openai"):
            from introspection_cli.evaluation.providers.openai_provider import OpenAIProvider

        return OpenAIProvider
    if provider == "anthropic":
        with sdk_import("anthropic"):
            from introspection_cli.evaluation.providers.anthropic_provider import (
                AnthropicProvider,
            )

        return AnthropicProvider
    raise ValueError(f"unknown provider {provider!r}")


@contextlib.contextmanager
def sdk_import(sdk: str) -> Iterator[None]:
    """Import an SDK with the garbage collector out of the way.

    An SDK import builds thousands of pydantic classes. With the collector running,
    its passes keep re-walking them (about a tenth of the import time), and every
    full collection during the run walks them again, although they live until the
    process exits. So the collector is paused for the import, and what exists
    afterwards is frozen (:func:`gc.freeze`): later collections, and the final ones
    at interpreter exit, look only at objects the run itself creates.
    """
    if sdk in sys.modules:  # imported already: nothing to gain, and nothing to freeze
        yield
        return
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
    gc.freeze()
