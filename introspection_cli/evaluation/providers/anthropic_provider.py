"""Anthropic Messages with the verdict tool forced."""

from __future__ import annotations

from typing import Any

import anthropic

from introspection_cli.evaluation.providers.interface import (
    ModelReply,
    ModelRequest,
    ProviderSettings,
    token_count,
)
from introspection_cli.evaluation.providers.sdk_client import SdkProvider
from introspection_cli.evaluation.providers.sdk_errors import wrap_sdk_error

_KEY_ENV = "ANTHROPIC_API_KEY"
#: Messages requires ``max_tokens``; a verdict with its reasoning fits well inside this.
DEFAULT_MAX_TOKENS = 1024


class AnthropicProvider(SdkProvider):
    """Calls ``messages.create`` with a forced tool."""

    name = "anthropic"

    def __init__(self, settings: ProviderSettings) -> None:
        super().__init__(settings)
        self._client = anthropic.AsyncAnthropic(**self.sdk_client_options(anthropic))
        # The first access imports the SDK's resource modules (~25 ms): do it here,
        # inside create_provider's import window, rather than in the first request.
        self._messages = self._client.messages

    async def complete(self, request: ModelRequest) -> ModelReply:
        """Send one request; SDK errors are wrapped into :class:`ProviderError`."""
        try:
            message = await self._messages.create(**request_body(request))
        except (anthropic.AnthropicError, ValueError) as exc:
            raise wrap_sdk_error(exc, anthropic, vendor="Anthropic", endpoint=self.endpoint,
                                 settings=self._settings, key_env=_KEY_ENV,
                                 body_kind="message", model=request.model) from exc
        return reply_from_message(message, request.tool_name)


#: Marks the end of a prompt prefix Anthropic may cache (the tool, the system prompt
#: and the judge's instructions: the same for every row of a judge).
_CACHE_POINT = {"type": "ephemeral"}


def request_body(request: ModelRequest) -> dict[str, Any]:
    """The ``messages.create`` arguments for ``request``: the JSON body sent.

    ``judges eval --batch`` sends this same body as each batch request's ``params``.
    The user message is two text blocks, the judge's instructions (the cacheable
    prefix, marked with ``cache_control``) and the conversation after them; the
    model reads them as one text.
    """
    split = request.user_prefix_length
    prefix, rest = request.user[:split], request.user[split:]
    content: list[dict[str, Any]] = []
    if prefix:
        content.append({"type": "text", "text": prefix, "cache_control": _CACHE_POINT})
    if rest or not content:
        content.append({"type": "text", "text": rest})
    kwargs: dict[str, Any] = {
        "model": request.model,
        "system": request.system,
        "messages": [{"role": "user", "content": content}],
        "max_tokens": request.max_output_tokens or DEFAULT_MAX_TOKENS,
        "tools": [{
            "name": request.tool_name,
            "description": request.tool_description,
            "input_schema": dict(request.tool_schema),
        }],
        "tool_choice": {"type": "tool", "name": request.tool_name},
    }
    # No temperature: the Messages API no longer takes sampling parameters (the plan
    # never puts one in an anthropic request; see providers.TAKES_TEMPERATURE).
    return kwargs


def reply_from_message(message: Any, tool_name: str) -> ModelReply:
    """Pull the tool input and text out of a message, tolerating missing parts.

    Also reads the messages of a batch's results (built the same lenient way).
    """
    usage = getattr(message, "usage", None)
    arguments: object | None = None
    other_tool: str | None = None
    texts: list[str] = []
    for block in getattr(message, "content", None) or []:
        kind = getattr(block, "type", None)
        if kind == "tool_use" and arguments is None:
            name = getattr(block, "name", None)
            if name == tool_name:
                arguments = getattr(block, "input", None)
            elif other_tool is None:
                other_tool = str(name)
        elif kind == "text":
            texts.append(getattr(block, "text", "") or "")
    stop_reason = getattr(message, "stop_reason", None)
    # Anthropic counts tokens read from and written to its prompt cache apart from
    # ``input_tokens``; the reply's input tokens are all three.
    cache_read = token_count(getattr(usage, "cache_read_input_tokens", None))
    cache_write = token_count(getattr(usage, "cache_creation_input_tokens", None))
    return ModelReply(
        tool_arguments=arguments,
        text="\n".join(texts) if texts else None,
        refusal="the model refused to answer" if stop_reason == "refusal" else None,
        stop_reason=stop_reason,
        input_tokens=token_count(getattr(usage, "input_tokens", None)) + cache_read + cache_write,
        output_tokens=token_count(getattr(usage, "output_tokens", None)),
        other_tool=None if arguments is not None else other_tool,
        cached_input_tokens=cache_read,
        cache_write_tokens=cache_write,
    )
