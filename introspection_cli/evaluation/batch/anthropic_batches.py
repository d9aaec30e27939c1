"""Anthropic's Message Batches: one create call with every request, polled, results streamed.

Each request's ``params`` are exactly what the direct path sends
(``anthropic_provider.request_body``); results arrive as a JSONL stream
(``messages.batches.results``), one line per request: ``succeeded`` with the
message, ``errored`` with the error, ``canceled`` or ``expired``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import anthropic

from introspection_cli.evaluation.batch.interface import (
    BatchItem,
    BatchState,
    ItemResult,
    ResultLine,
    provider_text,
    status_word,
)
from introspection_cli.evaluation.batch.jsonl import LineBudget
from introspection_cli.evaluation.batch.sdk_backend import SdkBatches, item_failure
from introspection_cli.evaluation.providers.anthropic_provider import (
    reply_from_message,
    request_body,
)
from introspection_cli.evaluation.providers.interface import (
    ProviderBadResponse,
    ProviderServiceError,
    token_count,
)
from introspection_cli.evaluation.verdict import VERDICT_TOOL_NAME

_OUTCOME = {
    "canceled": "batch {id} was cancelled before this request ran",
    "expired": "batch {id} expired (the 24-hour window) before this request ran",
}


class AnthropicBatches(SdkBatches):
    provider = "anthropic"
    # The API allows 100,000 requests and 256 MB per batch; stay clear of both.
    max_requests = 100_000
    max_bytes = 240 * 1000 * 1000
    _client_class = anthropic.AsyncAnthropic
    _sdk = anthropic
    _base_error = anthropic.AnthropicError
    _vendor = "Anthropic"
    _key_env = "ANTHROPIC_API_KEY"

    def encode(self, item: BatchItem) -> bytes:
        return json.dumps({"custom_id": item.key, "params": request_body(item.request)},
                          ensure_ascii=False, separators=(",", ":")).encode()

    async def submit(self, items: Sequence[BatchItem], encoded: Sequence[bytes]) -> str:
        # The SDK encodes the request list itself; ``encoded`` only sized the batch.
        requests = [{"custom_id": item.key, "params": request_body(item.request)}
                    for item in items]
        doing = "creating the message batch"
        batch = await self.json_call(
            self._client.messages.batches.with_streaming_response.create(requests=requests),
            doing, payload_bytes=sum(len(line) for line in encoded), creating=True)
        return self.id_in(batch, doing)

    async def retrieve(self, batch_id: str) -> BatchState:
        batch = await self.json_call(
            self._client.messages.batches.with_streaming_response.retrieve(batch_id),
            f"polling message batch {batch_id}", batch_id=batch_id)
        status = status_word(batch.get("processing_status"))
        counts = batch.get("request_counts")
        counts = counts if isinstance(counts, dict) else {}
        done = sum(token_count(counts.get(name))
                   for name in ("succeeded", "errored", "canceled", "expired"))
        return BatchState(batch_id, status, status == "ended", done,
                          done + token_count(counts.get("processing")))

    async def results(self, state: BatchState, tool_names: Mapping[str, str], *, requests: int
                      ) -> AsyncIterator[ResultLine]:
        # The SDK's results() retrieves the batch once more (for its results_url), a
        # batch object read whole by the SDK; the results themselves are streamed.
        response = self._client.messages.batches.with_streaming_response.results(
            state.batch_id)
        endpoint = self.endpoint
        async for item in self.stream(
                response, LineBudget(requests), f"the results of message batch {state.batch_id}",
                lambda line: _item(line, state.batch_id, tool_names, endpoint)):
            yield item

    def missing_reason(self, state: BatchState) -> str:
        return f"message batch {state.batch_id} returned no result for this request"


def _item(line: dict[str, Any], batch_id: str, tool_names: Mapping[str, str],
          endpoint: str) -> tuple[str, ItemResult] | None:
    """One results line as (custom_id, result); None when it names no request."""
    if not isinstance(line.get("custom_id"), str):
        return None
    custom_id: str = line["custom_id"]
    result = line.get("result")
    kind = result.get("type") if isinstance(result, dict) else None
    if kind == "succeeded":
        message = result.get("message")  # type: ignore[union-attr]
        if not isinstance(message, dict):
            return custom_id, ProviderBadResponse(
                f"message batch {batch_id} holds a result that is not a message")
        # Built as the SDK builds a direct reply: leniently, without validation.
        reply = reply_from_message(anthropic.types.Message.construct(**message),
                                   tool_names.get(custom_id, VERDICT_TOOL_NAME))
        return custom_id, reply
    if kind in _OUTCOME:
        return custom_id, ProviderServiceError(_OUTCOME[kind].format(id=batch_id))
    return custom_id, item_failure(f"message batch {batch_id}: {_error(result)}",
                                   _error_status(result), endpoint)


#: The HTTP status a direct call would have had, for the error types that refuse it.
_REFUSING_TYPES = {"invalid_request_error": 400, "not_found_error": 404,
                   "request_too_large": 413}


def _error_status(result: object) -> int | None:
    response = result.get("error") if isinstance(result, dict) else None
    error = response.get("error") if isinstance(response, dict) else None
    kind = error.get("type") if isinstance(error, dict) else None
    return _REFUSING_TYPES.get(kind) if isinstance(kind, str) else None


def _error(result: object) -> str:
    """What an ``errored`` result says: the error's type and message."""
    response = result.get("error") if isinstance(result, dict) else None
    error = response.get("error") if isinstance(response, dict) else None
    if isinstance(error, dict) and (error.get("type") or error.get("message")):
        return provider_text(f"{error.get('type') or 'error'}: {error.get('message') or ''}"
                             .rstrip(": "))
    return "the request failed, with no reason given"
