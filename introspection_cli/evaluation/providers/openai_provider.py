"""OpenAI Chat Completions with the verdict tool forced (also Ollama, vLLM, LM Studio)."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import openai

from introspection_cli.evaluation.providers.interface import (
    ModelReply,
    ModelRequest,
    ProviderSettings,
    token_count,
)
from introspection_cli.evaluation.providers.sdk_client import SdkProvider
from introspection_cli.evaluation.providers.sdk_errors import wrap_sdk_error

_KEY_ENV = "OPENAI_API_KEY"


#: What ``chat.completions.create`` asks of the client's authentication: the API key as a
#: bearer token (and not the admin key the client may also hold).
_AUTH: openai.RequestOptions = {"security": {"bearer_auth": True}}


class OpenAIProvider(SdkProvider):
    """Posts Chat Completions requests with a forced function tool through the SDK's client."""

    name = "openai"

    def __init__(self, settings: ProviderSettings) -> None:
        super().__init__(settings)
        self._client = openai.AsyncOpenAI(**self.sdk_client_options(openai))

    async def complete(self, request: ModelRequest) -> ModelReply:
        """Send one request; SDK errors are wrapped into :class:`ProviderError`.

        The body goes through the client's documented low-level ``post`` (its
        authentication, retries, timeouts and errors, as ``chat.completions.create``
        uses them), and the reply comes back as the raw response: ``create`` would
        also run the body through the SDK's type-driven transformation (a quarter of
        the client's CPU in a cold run, on the event loop, for a body that is plain
        JSON already) and build pydantic models of the reply; we read its JSON.
        """
        try:
            raw = await self._client.post("/chat/completions", body=request_body(request),
                                          options=_AUTH, cast_to=httpx2.Response)
            completion = json.loads(raw.content)
        except (openai.OpenAIError, ValueError) as exc:
            raise wrap_sdk_error(exc, openai, vendor="OpenAI", endpoint=self.endpoint,
                                 settings=self._settings, key_env=_KEY_ENV,
                                 body_kind="chat completion", model=request.model) from exc
        return reply_from_completion(completion, request.tool_name)


def request_body(request: ModelRequest) -> dict[str, Any]:
    """The ``chat.completions.create`` arguments for ``request``: the JSON body sent.

    ``judges eval --batch`` puts this same body in its batch file, so a batch result
    and a direct call of the same request are the same request (and cache entry).
    """
    kwargs: dict[str, Any] = {
        "model": request.model,
        "messages": [
            {"role": "system", "content": request.system},
            {"role": "user", "content": request.user},
        ],
        "tools": [{
            "type": "function",
            "function": {
                "name": request.tool_name,
                "description": request.tool_description,
                "strict": True,
                "parameters": dict(request.tool_schema),
            },
        }],
        "tool_choice": {"type": "function", "function": {"name": request.tool_name}},
    }
    if request.temperature is not None:
        kwargs["temperature"] = request.temperature
    if request.max_output_tokens is not None:
        kwargs["max_completion_tokens"] = request.max_output_tokens
    return kwargs


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None


def reply_from_completion(completion: Any, tool_name: str) -> ModelReply:
    """Pull the tool arguments and text out of a completion body, tolerating missing parts.

    Also reads the bodies of a batch's output file, which are chat completions too.
    """
    usage = _get(completion, "usage")
    tokens_in = token_count(_get(usage, "prompt_tokens"))
    tokens_out = token_count(_get(usage, "completion_tokens"))
    cached = min(tokens_in, token_count(_get(_get(usage, "prompt_tokens_details"),
                                             "cached_tokens")))
    choices = _get(completion, "choices")
    if not isinstance(choices, list) or not choices:
        return ModelReply(None, None, stop_reason="no choices in the reply",
                          input_tokens=tokens_in, output_tokens=tokens_out,
                          cached_input_tokens=cached)
    choice = choices[0]
    message = _get(choice, "message")
    tool_calls = _get(message, "tool_calls")
    arguments: object | None = None
    other_tool: str | None = None
    for call in tool_calls if isinstance(tool_calls, list) else ():
        function = _get(call, "function")
        name = _get(function, "name")
        if name == tool_name:
            arguments = function.get("arguments")
            break
        if other_tool is None and isinstance(function, dict):
            other_tool = str(name)
    text, refusal = _get(message, "content"), _get(message, "refusal")
    stop = _get(choice, "finish_reason")
    return ModelReply(
        tool_arguments=arguments,
        text=text if isinstance(text, str) else None,
        refusal=refusal if isinstance(refusal, str) else None,
        stop_reason=stop if isinstance(stop, str) else None,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        other_tool=None if arguments is not None else other_tool,
        cached_input_tokens=cached,
    )
