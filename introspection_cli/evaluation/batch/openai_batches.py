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
    ResultLine,
    plain_id,
    provider_text,
    status_word,
)
from introspection_cli.evaluation.batch.jsonl import LineBudget
from introspection_cli.evaluation.batch.sdk_backend import SdkBatches, item_failure
from introspection_cli.evaluation.providers.interface import (
    ProviderBadResponse,
    token_count,
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
        payload = b"".join(encoded)
        doing = "uploading the batch file"
        uploaded = await self.json_call(self._client.files.with_streaming_response.create(
            file=("introspection-batch.jsonl", payload, "application/jsonl"), purpose="batch"),
            doing, payload_bytes=len(payload), creating=True)
        file_id = self.id_in(uploaded, doing)
        doing = "creating the batch"
        batch = await self.json_call(self._client.batches.with_streaming_response.create(
            input_file_id=file_id, endpoint=ENDPOINT, completion_window="24h",
            metadata={"created_by": "introspection judges eval --batch"}), doing,
            creating=True)
        return self.id_in(batch, doing)

    async def retrieve(self, batch_id: str) -> BatchState:
        batch = await self.json_call(self._client.batches.with_streaming_response.retrieve(
            batch_id), f"polling batch {batch_id}", batch_id=batch_id)
        status = status_word(batch.get("status"))
        counts = batch.get("request_counts")
        counts = counts if isinstance(counts, dict) else {}
        failure = _batch_failure(batch) if status == "failed" else None
        return BatchState(batch_id, status, status in _ENDED,
                          token_count(counts.get("completed")) + token_count(counts.get("failed")),
                          token_count(counts.get("total")), failure=failure,
                          results=(plain_id(batch.get("output_file_id")),
                                   plain_id(batch.get("error_file_id"))))

    async def results(self, state: BatchState, tool_names: Mapping[str, str], *, requests: int
                      ) -> AsyncIterator[ResultLine]:
        budget = LineBudget(requests)  # the output and error files together
        for file_id in state.results or ():
            if file_id:
                response = self._client.files.with_streaming_response.content(file_id)
                async for item in self.stream(
                        response, budget, f"file {file_id} of batch {state.batch_id}",
                        lambda line: _item(line, state.batch_id, tool_names, self.endpoint)):
                    yield item

    def missing_reason(self, state: BatchState) -> str:
        if state.failure is not None:
            return f"batch {state.batch_id} failed: {state.failure}"
        return _MISSING.get(state.status, "batch {id} returned no result for this request"
                            ).format(id=state.batch_id)


def _item(line: dict[str, Any], batch_id: str, tool_names: Mapping[str, str],
          endpoint: str) -> tuple[str, ItemResult] | None:
    """One output or error line as (custom_id, result); None when it names no request."""
    if not isinstance(line.get("custom_id"), str):
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
    status = response.get("status_code") if isinstance(response, dict) else None
    return custom_id, item_failure(f"batch {batch_id}: {_failure(response, error)}",
                                   status if isinstance(status, int) else None, endpoint)


def _batch_failure(batch: dict[str, Any]) -> str:
    """Why a ``failed`` batch failed: the first messages of its ``errors`` list."""
    errors = batch.get("errors")
    data = errors.get("data") if isinstance(errors, dict) else None
    reasons = [provider_text(error.get("message") or error.get("code") or "")
               for error in (data if isinstance(data, list) else [])[:3]
               if isinstance(error, dict)]
    return "; ".join(reason for reason in reasons if reason) or "no reason given"


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
