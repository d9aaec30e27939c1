"""OpenAI's Batch API: a JSONL file of Chat Completions requests, polled, its output read.

Submitting uploads the requests (``files.create``, purpose ``batch``) and
creates a batch on ``/v1/chat/completions`` (``batches.create``); each line's
``body`` is exactly what the direct path sends (``openai_provider.request_body``).
Results come from the batch's output file (successes, and requests the API
answered with an HTTP error) and its error file (requests that failed, expired
or were cancelled), both streamed (``files.content``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import openai

from introspection_cli.evaluation.batch.interface import (
    BatchItem,
    BatchState,
    ItemResult,
    provider_text,
)
from introspection_cli.evaluation.batch.sdk_backend import SdkBatches
from introspection_cli.evaluation.providers.interface import (
    ProviderBadResponse,
    ProviderServiceError,
)
from introspection_cli.evaluation.providers.openai_provider import (
    reply_from_completion,
    request_body,
)
from introspection_cli.evaluation.verdict import VERDICT_TOOL_NAME

ENDPOINT = "/v1/chat/completions"
_ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
_MISSING = {
    "expired": "batch {id} expired (the 24-hour window) before this request ran",
    "cancelled": "batch {id} was cancelled before this request ran",
    "failed": "batch {id} failed before this request ran",
}


class OpenAIBatches(SdkBatches):
    provider = "openai"
    # The API allows 50,000 requests and 200 MB per file; stay clear of both.
    max_requests = 50_000
    max_bytes = 190 * 1000 * 1000
    _client_class = openai.AsyncOpenAI
    _sdk = openai
    _base_error = openai.OpenAIError
    _vendor = "OpenAI"
    _key_env = "OPENAI_API_KEY"

    def group_of(self, item: BatchItem) -> str:
        return item.request.model  # one model per batch file

    def encode(self, item: BatchItem) -> bytes:
        line = {"custom_id": item.key, "method": "POST", "url": ENDPOINT,
                "body": request_body(item.request)}
        return json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"

    async def submit(self, items: Sequence[BatchItem], encoded: Sequence[bytes]) -> str:
        with self.sdk_errors("uploading the batch file"):
            uploaded = await self._client.files.create(
                file=("introspection-batch.jsonl", b"".join(encoded), "application/jsonl"),
                purpose="batch")
        with self.sdk_errors("creating the batch"):
            batch = await self._client.batches.create(
                input_file_id=uploaded.id, endpoint=ENDPOINT, completion_window="24h",
                metadata={"created_by": "introspection judges eval --batch"})
        return str(batch.id)

    async def retrieve(self, batch_id: str) -> BatchState:
        with self.sdk_errors(f"polling batch {batch_id}", batch_id=batch_id):
            batch = await self._client.batches.retrieve(batch_id)
        counts = batch.request_counts
        done = (counts.completed or 0) + (counts.failed or 0) if counts is not None else 0
        failure = None
        if batch.status == "failed":
            errors = (batch.errors.data or []) if batch.errors is not None else []
            reasons = [provider_text(e.message or e.code or "") for e in errors[:3]]
            failure = "; ".join(reason for reason in reasons if reason) or "no reason given"
        return BatchState(batch_id, batch.status, batch.status in _ENDED, done,
                          counts.total if counts is not None else 0, failure=failure,
                          results=(batch.output_file_id, batch.error_file_id))

    async def results(self, state: BatchState, tool_names: Mapping[str, str]
                      ) -> AsyncIterator[tuple[str, ItemResult]]:
        for file_id in state.results or ():
            if file_id:
                response = self._client.files.with_streaming_response.content(file_id)
                async for item in self.stream(
                        response, state, f"file {file_id} of batch {state.batch_id}",
                        lambda line: _item(line, state.batch_id, tool_names)):
                    yield item

    def missing_reason(self, state: BatchState) -> str:
        if state.failure is not None:
            return f"batch {state.batch_id} failed: {state.failure}"
        return _MISSING.get(state.status, "batch {id} returned no result for this request"
                            ).format(id=state.batch_id)


def _item(line: dict[str, Any] | None, batch_id: str, tool_names: Mapping[str, str]
          ) -> tuple[str, ItemResult] | None:
    """One output or error line as (custom_id, result); None when it names no request."""
    if line is None or not isinstance(line.get("custom_id"), str):
        return None
    custom_id: str = line["custom_id"]
    response, error = line.get("response"), line.get("error")
    if isinstance(response, dict) and response.get("status_code") == 200:
        body = response.get("body")
        if not isinstance(body, dict):
            return custom_id, ProviderBadResponse(
                f"batch {batch_id} holds a result that is not a chat completion")
        return custom_id, reply_from_completion(
            body, tool_names.get(custom_id, VERDICT_TOOL_NAME))
    return custom_id, ProviderServiceError(f"batch {batch_id}: {_failure(response, error)}")


def _failure(response: object, error: object) -> str:
    """What an error line says went wrong: the HTTP status and message, or the error code."""
    if isinstance(error, dict) and (error.get("code") or error.get("message")):
        code = error.get("code")
        if code == "batch_expired":
            return "the request expired (the 24-hour window) before it ran"
        return provider_text(f"{code}: {error.get('message')}" if code else error["message"])
    if isinstance(response, dict):
        status = response.get("status_code")
        body = response.get("body")
        detail = body.get("error") if isinstance(body, dict) else None
        message = detail.get("message") if isinstance(detail, dict) else None
        return f"HTTP {provider_text(status)}" + (f": {provider_text(message)}" if message
                                                  else "")
    return "the request failed, with no reason given"
