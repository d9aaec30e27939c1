"""The model-provider layer: one abstract method, frozen values, one error hierarchy.

A provider turns a :class:`ModelRequest` (messages + the verdict tool schema +
sampling parameters) into a :class:`ModelReply` (what the model said, untouched)
or raises a :class:`ProviderError`. Validating the reply is not the provider's
job: :mod:`introspection_cli.evaluation.verdict` does that for every provider
alike, so a misbehaving server is handled in one place.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:  # only a type here: a run that calls nothing never loads ssl
    import ssl

Role = Literal["system", "user"]


@dataclass(frozen=True, slots=True)
class ChatMessage:
    role: Role
    content: str


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One call: the exact messages, the forced tool and the sampling parameters.

    The first ``user_prefix_length`` characters of ``user`` are the same for every
    row of the judge: with the system prompt and the tool, the prefix a provider
    can cache (Anthropic's ``cache_control`` marks it). Not part of the cache key:
    it changes how the request is laid out, not what the model reads.
    """

    model: str
    system: str
    user: str
    tool_name: str
    tool_description: str
    tool_schema: Mapping[str, Any]
    temperature: float | None = None
    max_output_tokens: int | None = None
    user_prefix_length: int = 0


@dataclass(frozen=True, slots=True)
class ModelReply:
    """What came back, before validation.

    ``tool_arguments`` is the forced tool's arguments as the server sent them
    (a JSON string from OpenAI, usually a dict from Anthropic, anything from a
    misbehaving server); ``None`` when the reply carried no tool call. ``text``
    is the text content, if any; ``refusal`` a refusal message, if any;
    ``other_tool`` the name of a tool the model called instead of the forced one.
    """

    tool_arguments: object | None
    text: str | None
    refusal: str | None = None
    stop_reason: str | None = None
    #: Every input token of the call, cached or not (Anthropic counts cache reads and
    #: writes apart from ``input_tokens``; they are added in here).
    input_tokens: int = 0
    output_tokens: int = 0
    other_tool: str | None = None
    #: Of ``input_tokens``, those read from the provider's prompt cache.
    cached_input_tokens: int = 0
    #: Of ``input_tokens``, those written to the provider's prompt cache (Anthropic).
    cache_write_tokens: int = 0


def token_count(value: object) -> int:
    """A usage count from a reply: a non-negative integer, else 0 (a server may send
    anything there, and the report's usage counts are integers >= 0)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


class ProviderError(Exception):
    """A call failed. Messages never contain the API key or request headers."""


class ProviderAuthError(ProviderError):
    """The provider rejected the API key (401/403): no other call can succeed either."""

    def __init__(self, message: str, *, env_var: str, status: int) -> None:
        super().__init__(message)
        self.env_var = env_var
        self.status = status


class ProviderServiceError(ProviderError):
    """The provider failed after the SDK's retries: an HTTP error (429, 5xx) or, as
    :class:`ProviderUnreachable`, no answer at all."""


class ProviderUnreachable(ProviderServiceError):
    """No answer after the SDK's retries: could not connect, or timed out."""

    #: True when no later call can get an answer either (stop calling at once).
    fatal: bool = False


class ProviderCertificateError(ProviderUnreachable):
    """The server's TLS certificate did not verify: not retried, and no call can pass."""

    fatal = True


class ProviderRefused(ProviderError):
    """A non-retryable 4xx (400, 404, 422...): the request is wrong for this provider (a
    bad model name, a bad parameter), and sending it again will not help."""

    def __init__(self, message: str, *, status: int, endpoint: str = "",
                 model: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.endpoint = endpoint
        self.model = model


class ProviderBadResponse(ProviderError):
    """The provider answered 200 with a body that is not a model reply (e.g. not JSON)."""


class Provider(abc.ABC):
    """A model provider. Implementations wrap every SDK error into :class:`ProviderError`."""

    #: ``openai`` or ``anthropic``: part of the cache key.
    name: str

    @property
    @abc.abstractmethod
    def endpoint(self) -> str:
        """The base URL calls go to: part of the cache key, never a secret."""

    @abc.abstractmethod
    async def complete(self, request: ModelRequest) -> ModelReply:
        """Send ``request`` with the tool forced; return the reply or raise ProviderError."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Release network resources."""


#: Told of each 429 the provider answers, with its Retry-After in seconds (if any).
RateLimitListener = Callable[[float | None], None]


@dataclass(frozen=True, slots=True)
class ProviderSettings:
    """How to build a provider client; the key is held here and nowhere else."""

    api_key: str
    base_url: str | None
    max_retries: int
    timeout: float
    on_rate_limit: RateLimitListener | None = field(default=None, compare=False)
    #: The proxy to reach ``base_url`` through (``None``: directly), and the TLS
    #: context to verify it with (``None``: the HTTP client's default); see netenv.
    proxy: str | None = None
    verify: ssl.SSLContext | None = field(default=None, compare=False)

    def __repr__(self) -> str:  # keep the key out of any repr, log or traceback
        base_url = None if self.base_url is None else without_userinfo(self.base_url)
        proxy = None if self.proxy is None else without_userinfo(self.proxy)
        return (f"ProviderSettings(api_key='***', base_url={base_url!r}, "
                f"max_retries={self.max_retries}, timeout={self.timeout}, proxy={proxy!r})")


def without_userinfo(url: str) -> str:
    """``url`` without a ``user:password@`` part, for messages and cache keys.

    A base URL may carry credentials (``https://user:secret@proxy.example/v1``);
    they are sent, but never shown, logged, reported or cached.
    """
    try:
        parts = urlsplit(url)
    except ValueError:  # not parseable as a URL: keep at most what follows an "@"
        return url.rpartition("@")[2]
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
