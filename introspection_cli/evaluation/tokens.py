"""Tokens a request is estimated to take, from text length: ``judges eval --dry-run`` and
``judges plan`` price requests with these.

Tokens are estimated from text length (about four characters a token, as the
providers' tokenizers average on English), not counted by a tokenizer: the
input is the system prompt, the user message and the tool's schema; the output
is the judge's ``max_output_tokens`` or :data:`OUTPUT_ESTIMATE`, whichever is
smaller. Light on purpose (no event loop, cache or SDK): ``judges plan`` is as
fast as ``judges status``.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from introspection_cli.evaluation.providers import ModelRequest

#: Characters per token, for the estimate.
CHARS_PER_TOKEN = 4
#: Output tokens a verdict with its reasoning is estimated to take.
OUTPUT_ESTIMATE = 250


def estimate_tokens(text: str) -> int:
    """Tokens in ``text``, estimated from its length."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def request_tokens(request: ModelRequest) -> tuple[int, int]:
    """Estimated (input, output) tokens of ``request``."""
    tool = json.dumps(dict(request.tool_schema), separators=(",", ":"))
    tokens_in = estimate_tokens(request.system) + estimate_tokens(request.user) + \
        estimate_tokens(request.tool_name + request.tool_description + tool)
    limit = request.max_output_tokens
    return tokens_in, OUTPUT_ESTIMATE if limit is None else min(limit, OUTPUT_ESTIMATE)
