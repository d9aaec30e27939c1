"""OpenAI Chat Completions with the verdict tool forced (also Ollama, vLLM, LM Studio)."""

from __future__ import annotations

import json
from typing import Any

import openai

from introspection_cli.evaluation.providers.interface import (
    ModelReply,
    ModelRequest,
    Provider,
    ProviderAuthError,
    ProviderBadResponse,
    ProviderError,
    ProviderServiceError,
    ProviderSettings,
)

_KEY_ENV = "OPENAI_API_KEY"


class OpenAIProvider(Provider):
    """Calls ``chat.completions.create`` with a forced function tool."""

    name = "openai"

    def __init__(self, settings: ProviderSettings) -> None:
        self._settings = settings
        self._client = openai.AsyncOpenAI(
            api_key=settings.api_key,
            base_url=settings.base_url,
            max_retries=settings.max_retries,
            timeout=settings.timeout,
        )
        # The first access imports the SDK's resource modules (~25 ms): do it here,
        # inside create_provider's import window, rather than in the first request.
        self._completions = self._client.chat.completions

    @property
    def endpoint(self) -> str:
        return str(self._client.base_url).rstrip("/")

    async def complete(self, request: ModelRequest) -> ModelReply:
        """Send one request; SDK errors are wrapped into :class:`ProviderError`."""
        try:
            completion = await self._completions.create(**_create_kwargs(request))
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            raise ProviderAuthError(
                f"the OpenAI endpoint {self.endpoint} rejected the API key "
                f"(HTTP {exc.status_code}); check {_KEY_ENV}",
                env_var=_KEY_ENV, status=exc.status_code) from exc
        except openai.APIStatusError as exc:
            raise ProviderServiceError(
                f"HTTP {exc.status_code} from {self.endpoint} "
                f"after {self._settings.max_retries} retries") from exc
        except openai.APITimeoutError as exc:
            raise ProviderServiceError(
                f"no answer from {self.endpoint} within {self._settings.timeout:g} s "
                f"after {self._settings.max_retries} retries") from exc
        except openai.APIConnectionError as exc:
            raise ProviderServiceError(
                f"could not connect to {self.endpoint} "
                f"after {self._settings.max_retries} retries") from exc
        except (json.JSONDecodeError, openai.APIResponseValidationError) as exc:
            # The SDK lets a 200 whose body is not JSON escape as a bare JSONDecodeError.
            raise ProviderBadResponse(
                f"{self.endpoint} answered with a body that is not a chat completion") from exc
        except openai.OpenAIError as exc:
            raise ProviderError(f"OpenAI client error: {type(exc).__name__}") from exc
        return _reply_from_completion(completion)

    async def aclose(self) -> None:
        await self._client.close()


def _create_kwargs(request: ModelRequest) -> dict[str, Any]:
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


def _reply_from_completion(completion: Any) -> ModelReply:
    """Pull the tool arguments and text out of a completion, tolerating missing parts."""
    usage = getattr(completion, "usage", None)
    tokens_in = getattr(usage, "prompt_tokens", None) or 0
    tokens_out = getattr(usage, "completion_tokens", None) or 0
    choices = getattr(completion, "choices", None) or []
    if not choices:
        return ModelReply(None, None, stop_reason="no choices in the reply",
                          input_tokens=tokens_in, output_tokens=tokens_out)
    choice = choices[0]
    message = getattr(choice, "message", None)
    tool_calls = getattr(message, "tool_calls", None) or []
    arguments: object | None = None
    for call in tool_calls:
        function = getattr(call, "function", None)
        if function is not None:
            arguments = getattr(function, "arguments", None)
            break
    return ModelReply(
        tool_arguments=arguments,
        text=getattr(message, "content", None),
        refusal=getattr(message, "refusal", None),
        stop_reason=getattr(choice, "finish_reason", None),
        input_tokens=tokens_in,
        output_tokens=tokens_out,
    )
