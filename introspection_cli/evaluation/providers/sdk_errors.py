"""One mapping from the model SDKs' exceptions to :class:`ProviderError`.

The ``openai`` and ``anthropic`` SDKs are generated from the same template and
raise exceptions with the same names and meanings, so both providers wrap them
here. Messages name the endpoint and the env var, never the key, and say how
many retries were made only when some were: the SDK numbers each attempt in its
``x-stainless-retry-count`` header, read back from the failed request.
"""

from __future__ import annotations

import json
from types import ModuleType

from introspection_cli.diagnostics import escape_text
from introspection_cli.evaluation.providers.interface import (
    ProviderAuthError,
    ProviderBadResponse,
    ProviderCertificateError,
    ProviderError,
    ProviderRefused,
    ProviderServiceError,
    ProviderSettings,
    ProviderUnreachable,
)
from introspection_cli.evaluation.providers.transport_errors import (
    CertificateFailure,
    ReplyTooLarge,
)

#: Statuses the SDKs retry (then fail as a service error); other 4xx are refusals.
_RETRIED = frozenset({408, 409, 429})
_MESSAGE_CHARS = 200


def wrap_sdk_error(exc: Exception, sdk: ModuleType, *, vendor: str, endpoint: str,
                   settings: ProviderSettings, key_env: str, body_kind: str,
                   model: str | None = None) -> ProviderError:
    """The :class:`ProviderError` for ``exc``, raised by ``sdk`` (``openai`` or ``anthropic``).

    ``body_kind`` names what a 200 reply should have held ("chat completion");
    ``model`` is named in a refusal. Anything this does not recognise becomes a
    plain :class:`ProviderError`.
    """
    if isinstance(exc, ReplyTooLarge):
        return ProviderBadResponse(f"the reply from {endpoint} is {exc}; it was not read "
                                   "further")
    if isinstance(exc, CertificateFailure):
        return ProviderCertificateError(
            f"{exc}; if {endpoint} uses a private CA, point SSL_CERT_FILE (a PEM file) or "
            "SSL_CERT_DIR at its certificate")
    retries = _after_retries(exc)
    if isinstance(exc, sdk.AuthenticationError | sdk.PermissionDeniedError):
        return ProviderAuthError(
            f"the {vendor} endpoint {endpoint} rejected the API key "
            f"(HTTP {exc.status_code}); check {key_env}", env_var=key_env,
            status=exc.status_code)
    if isinstance(exc, sdk.APIStatusError):
        status = exc.status_code
        said = _server_message(exc, settings.api_key)
        if is_refusal(status):
            for_model = f" for model {model}" if model else ""
            return ProviderRefused(
                f"HTTP {status} from {endpoint}{for_model}: {said or 'no message'}; check the "
                "model name and the judge's llm settings", status=status, endpoint=endpoint,
                model=model)
        limited = " (rate limited)" if status == 429 else ""
        return ProviderServiceError(f"HTTP {status}{limited} from {endpoint}{retries}"
                                    + (f": {said}" if said else ""))
    if isinstance(exc, sdk.APITimeoutError):  # before APIConnectionError, its base class
        return ProviderUnreachable(
            f"no complete answer from {endpoint} within {settings.timeout:g} s{retries}")
    if isinstance(exc, sdk.APIConnectionError):
        return ProviderUnreachable(f"could not connect to {endpoint}{retries}")
    if isinstance(exc, json.JSONDecodeError | UnicodeDecodeError
                  | sdk.APIResponseValidationError):
        # A 200 whose body is not JSON escapes the SDKs as a bare JSONDecodeError.
        return ProviderBadResponse(f"{endpoint} answered with a body that is not a {body_kind}")
    return ProviderError(f"{vendor} client error: {type(exc).__name__}")


def is_refusal(status: int) -> bool:
    """Whether HTTP ``status`` says the request itself is wrong (a 4xx the SDKs do not
    retry): sending it again cannot help. Batch results are judged by it too."""
    return 400 <= status < 500 and status not in _RETRIED


def _after_retries(exc: Exception) -> str:
    """`` after N retries`` when the SDK retried the failed request, else nothing."""
    request = getattr(exc, "request", None)
    headers = getattr(request, "headers", None)
    try:
        retries = int(headers.get("x-stainless-retry-count", "0")) if headers is not None else 0
    except (TypeError, ValueError):
        retries = 0
    if retries <= 0:
        return ""
    return f" after {retries} {'retry' if retries == 1 else 'retries'}"


def _server_message(exc: Exception, api_key: str) -> str:
    """The provider's own error message, if it sent one: one line, short, no key in it."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
    else:
        message = body
    if not isinstance(message, str) or not message.strip():
        return ""
    text = " ".join(message.split())
    if api_key:
        text = text.replace(api_key, "***")
    if len(text) > _MESSAGE_CHARS:
        text = text[:_MESSAGE_CHARS] + "…"
    return escape_text(text)
