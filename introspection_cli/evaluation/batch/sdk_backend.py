"""What the two SDK-backed batch backends share: the client, its endpoint, error wrapping."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Iterator
from types import ModuleType
from typing import Any

from introspection_cli.evaluation.batch.interface import (
    BatchBackend,
    BatchGone,
    BatchState,
    ItemResult,
)
from introspection_cli.evaluation.batch.jsonl import json_lines
from introspection_cli.evaluation.providers.interface import ProviderSettings, without_userinfo
from introspection_cli.evaluation.providers.sdk_client import SdkProvider
from introspection_cli.evaluation.providers.sdk_errors import wrap_sdk_error

#: Turns one result line (None: unreadable) into (custom_id, result), or None.
LineReader = Callable[[dict[str, Any] | None], tuple[str, ItemResult] | None]


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
        self._client = self._client_class(**SdkProvider.client_options(settings))

    @property
    def endpoint(self) -> str:
        return without_userinfo(str(self._client.base_url).rstrip("/"))

    @contextlib.contextmanager
    def sdk_errors(self, doing: str, *, batch_id: str | None = None) -> Iterator[None]:
        """Wrap the SDK's exceptions raised while ``doing`` (``creating a batch``) into
        ProviderError; a 404 for ``batch_id`` is :class:`BatchGone`."""
        try:
            yield
        except self._sdk.NotFoundError as exc:
            if batch_id is None:
                raise self._wrap(exc, doing) from exc
            raise BatchGone(batch_id) from exc
        except (self._base_error, ValueError) as exc:
            raise self._wrap(exc, doing) from exc

    def _wrap(self, exc: Exception, doing: str) -> Exception:
        error = wrap_sdk_error(exc, self._sdk, vendor=self._vendor, endpoint=self.endpoint,
                               settings=self._settings, key_env=self._key_env,
                               body_kind="batch object")
        error.args = (f"{doing}: {error}",)
        return error

    async def stream(self, response: Any, state: BatchState, source: str,
                     read: LineReader) -> AsyncIterator[tuple[str, ItemResult]]:
        """The results in the streamed ``response`` (an SDK ``with_streaming_response``
        call) of ``state``'s batch, each line turned into a result by ``read``."""
        with self.sdk_errors(f"downloading {source}"):
            async with response as body:
                lines = json_lines(body.iter_bytes(), expected=state.total,
                                   timeout=self._settings.timeout, source=source)
                async for line in lines:
                    item = read(line)
                    if item is not None:
                        yield item

    async def aclose(self) -> None:
        await self._client.close()
