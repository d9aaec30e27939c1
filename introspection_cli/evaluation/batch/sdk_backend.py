"""What the two SDK-backed batch backends share: the client, error wrapping, bounded reads.

Every answer is read through the SDK's streaming responses, so its size is
capped before it is held (a batch object: 16 MiB; results: line by line, in
:mod:`.jsonl`), and every call has a wall-clock deadline covering the SDK's
retries. Batch objects are read as plain JSON, leniently, as the direct path
reads a chat completion.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable, Iterator
from types import ModuleType
from typing import Any

from introspection_cli.evaluation.batch.interface import (
    BatchBackend,
    BatchGone,
    ItemResult,
    NoBatchApi,
    ResultLine,
    UnreadableLine,
    plain_id,
    provider_text,
)
from introspection_cli.evaluation.batch.jsonl import LineBudget, json_lines, read_capped
from introspection_cli.evaluation.providers.interface import (
    ProviderBadResponse,
    ProviderError,
    ProviderRefused,
    ProviderServiceError,
    ProviderSettings,
    without_userinfo,
)
from introspection_cli.evaluation.providers.sdk_client import SdkProvider
from introspection_cli.evaluation.providers.sdk_errors import is_refusal, wrap_sdk_error

#: The largest batch object (or file object) read: a failed batch lists its errors.
METADATA_BYTES = 16 * 1024 * 1024
#: The longest wait the SDKs make between two tries (they honour Retry-After up to it).
_SDK_RETRY_WAIT_S = 120.0
#: Seconds an upload may take per MB on top of the deadline (a 190 MB file: 12.7 min).
_UPLOAD_SECONDS_PER_MB = 4.0

def item_failure(reason: str, status: int | None, endpoint: str) -> ProviderError:
    """The error of one request a batch failed: a refusal (the request is wrong, as a
    direct call's 400 is) when ``status`` says so, else the provider failing."""
    if status is not None and is_refusal(status):
        return ProviderRefused(f"{reason}; check the model name and the judge's llm settings",
                               status=status, endpoint=endpoint)
    return ProviderServiceError(reason)


#: Turns one result line into (custom_id, result); None when it names no request.
LineReader = Callable[[dict[str, Any]], tuple[str, ItemResult] | None]
#: The statuses a server without batch endpoints answers their first call with.
_NO_SUCH_ROUTE = (404, 405)


class SdkBatches(BatchBackend):
    """A batch backend over an official SDK's async client, held in ``_client``."""

    _client: Any  # openai.AsyncOpenAI or anthropic.AsyncAnthropic
    #: The SDK's async client class, built with the direct path's client options.
    _client_class: Callable[..., Any]
    _sdk: ModuleType
    #: The SDK's base exception (``openai.OpenAIError``, ``anthropic.AnthropicError``).
    _base_error: type[Exception]
    _vendor: str
    _key_env: str

    def __init__(self, settings: ProviderSettings) -> None:
        self._settings = settings
        self._client = self._client_class(**SdkProvider.client_options(settings, self._sdk))

    @property
    def endpoint(self) -> str:
        return without_userinfo(str(self._client.base_url).rstrip("/"))

    @contextlib.contextmanager
    def sdk_errors(self, doing: str, *, batch_id: str | None = None,
                   creating: bool = False) -> Iterator[None]:
        """Wrap the SDK's exceptions raised while ``doing`` (``creating a batch``) into
        ProviderError; a 404 for ``batch_id`` is :class:`BatchGone`, and a 404 or 405
        to a call ``creating`` a batch is :class:`NoBatchApi`."""
        try:
            yield
        except self._sdk.APIStatusError as exc:
            if batch_id is not None and exc.status_code == 404:
                raise BatchGone(batch_id) from exc
            if creating and exc.status_code in _NO_SUCH_ROUTE:
                raise NoBatchApi(
                    f"{self.endpoint}: this endpoint has no batch API (HTTP "
                    f"{exc.status_code} on {self._route(exc)}); run without --batch") from exc
            raise self._wrap(exc, doing) from exc
        except (self._base_error, ValueError) as exc:
            raise self._wrap(exc, doing) from exc

    def _route(self, exc: Any) -> str:
        """The path ``exc``'s request went to, below the endpoint (``/files``)."""
        base = str(self._client.base_url.path).rstrip("/")
        path = str(exc.request.url.path)
        return path[len(base):] if path.startswith(base + "/") else path

    def deadline(self, payload_bytes: int = 0) -> float:
        """Seconds one SDK call may take in all, its retries (and ``payload_bytes`` of
        upload) included."""
        retries = self._settings.max_retries
        return ((retries + 1) * self._settings.timeout + retries * _SDK_RETRY_WAIT_S
                + _UPLOAD_SECONDS_PER_MB * payload_bytes / 1e6)

    async def json_call(self, response: Any, doing: str, *, batch_id: str | None = None,
                        payload_bytes: int = 0, creating: bool = False) -> dict[str, Any]:
        """The JSON object answered to ``response`` (an SDK ``with_streaming_response``
        call, not yet entered), read under :data:`METADATA_BYTES` and a deadline."""
        seconds = self.deadline(payload_bytes)
        try:
            with self.sdk_errors(doing, batch_id=batch_id, creating=creating):
                async with asyncio.timeout(seconds), response as body:
                    raw = await read_capped(body.iter_bytes(), METADATA_BYTES, doing)
        except TimeoutError:
            raise ProviderServiceError(
                f"{doing}: no answer from {self.endpoint} within {seconds:g} s") from None
        try:
            value = json.loads(raw)
        except ValueError:
            value = None
        if not isinstance(value, dict):
            raise ProviderBadResponse(
                f"{doing}: {self.endpoint} answered with a body that is not a JSON object")
        return value

    def id_in(self, value: dict[str, Any], doing: str) -> str:
        """The ``id`` of an object the provider answered, if it is a plain id."""
        found = plain_id(value.get("id"))
        if found is None:
            raise ProviderBadResponse(
                f"{doing}: {self.endpoint} answered with an unusable id "
                f"({provider_text(str(value.get('id'))[:40])})")
        return found

    def _wrap(self, exc: Exception, doing: str) -> Exception:
        error = wrap_sdk_error(exc, self._sdk, vendor=self._vendor, endpoint=self.endpoint,
                               settings=self._settings, key_env=self._key_env,
                               body_kind="batch object")
        error.args = (f"{doing}: {error}",)
        return error

    async def stream(self, response: Any, budget: LineBudget, source: str,
                     read: LineReader) -> AsyncIterator[ResultLine]:
        """The lines of the streamed ``response`` (an SDK ``with_streaming_response``
        call), each JSON object turned into a result by ``read``, under ``budget``."""
        seconds = self.deadline()
        with self.sdk_errors(f"downloading {source}"):
            async with contextlib.AsyncExitStack() as stack:
                try:
                    async with asyncio.timeout(seconds):
                        body = await stack.enter_async_context(response)
                except TimeoutError:
                    raise ProviderServiceError(
                        f"downloading {source}: no answer within {seconds:g} s") from None
                # The body has its own deadline, applied read by read (a timeout must
                # not span the yields below).
                lines = json_lines(body.iter_bytes(), budget=budget,
                                   timeout=self._settings.timeout, source=source)
                async for line in lines:
                    if isinstance(line, UnreadableLine):
                        yield line
                    else:
                        yield read(line) or UnreadableLine("unnamed")

    async def aclose(self) -> None:
        await self._client.close()
