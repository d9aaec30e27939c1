"""One mapping from the model SDKs' exceptions to :class:`ProviderError`.

The ``openai`` and ``anthropic`` SDKs are generated from the same template and
raise exceptions with the same names and meanings, so both providers wrap them
here. Messages name the endpoint and the env var, never the key.
"""

from __future__ import annotations

import json
from types import ModuleType

from introspection_cli.evaluation.providers.interface import (
    ProviderAuthError,
    ProviderBadResponse,
    ProviderError,
    ProviderServiceError,
    ProviderSettings,
)


def wrap_sdk_error(exc: Exception, sdk: ModuleType, *, vendor: str, endpoint: str,
                   settings: ProviderSettings, key_env: str, body_kind: str) -> ProviderError:
    """The :class:`ProviderError` for ``exc``, raised by ``sdk`` (``openai`` or ``anthropic``).

    ``body_kind`` names what a 200 reply should have held ("chat completion").
    Anything this does not recognise becomes a plain :class:`ProviderError`.
    """
    retries = f"after {settings.max_retries} retries"
    if isinstance(exc, sdk.AuthenticationError | sdk.PermissionDeniedError):
        return ProviderAuthError(
            f"the {vendor} endpoint {endpoint} rejected the API key "
            f"(HTTP {exc.status_code}); check {key_env}", env_var=key_env,
            status=exc.status_code)
    if isinstance(exc, sdk.APIStatusError):
        return ProviderServiceError(f"HTTP {exc.status_code} from {endpoint} {retries}")
    if isinstance(exc, sdk.APITimeoutError):  # before APIConnectionError, its base class
        return ProviderServiceError(
            f"no answer from {endpoint} within {settings.timeout:g} s {retries}")
    if isinstance(exc, sdk.APIConnectionError):
        return ProviderServiceError(f"could not connect to {endpoint} {retries}")
    if isinstance(exc, json.JSONDecodeError | UnicodeDecodeError
                  | sdk.APIResponseValidationError):
        # A 200 whose body is not JSON escapes the SDKs as a bare JSONDecodeError.
        return ProviderBadResponse(f"{endpoint} answered with a body that is not a {body_kind}")
    return ProviderError(f"{vendor} client error: {type(exc).__name__}")
