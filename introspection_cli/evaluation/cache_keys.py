"""The verdict cache's keys: what determines one sample's answer, hashed.

The key covers everything that can change a verdict (provider, model, endpoint,
parameters, the exact messages, the tool schema, the sample index), so editing
one rubric re-calls only that judge. It is SHA-256 over the RFC 8785 JSON of
those, so keys never depend on dict order or Python versions. The API key is
never part of one.
"""

from __future__ import annotations

import hashlib

from introspection_cli.evaluation.providers.interface import ModelRequest, without_userinfo
from introspection_cli.fixture.canonical import canonical_json

#: Bumped when the key layout changes, so old entries are simply never hit again.
KEY_VERSION = 1


def cache_key(*, provider: str, endpoint: str, request: ModelRequest, sample: int) -> str:
    """SHA-256 over the canonical JSON of everything that determines one sample's answer."""
    material = {
        "v": KEY_VERSION,
        "provider": provider,
        "endpoint": without_userinfo(endpoint),  # credentials in a URL are not an identity
        "model": request.model,
        "parameters": {"temperature": request.temperature,
                       "max_output_tokens": request.max_output_tokens},
        "messages": [{"role": "system", "content": request.system},
                     {"role": "user", "content": request.user}],
        "tool": {"name": request.tool_name, "description": request.tool_description,
                 "schema": dict(request.tool_schema)},
        "sample": sample,
    }
    # canonical_json gives the rfc8785 package's bytes (so keys are unchanged), through
    # the C JSON encoder unless the text needs the reference: ~10x faster on prompts.
    return hashlib.sha256(canonical_json(material)).hexdigest()


class KeyMaker:
    """:func:`cache_key` for many requests that differ only in their user message.

    The canonical JSON of the key material is its members in sorted order, so the
    bytes before and after the user message are the same for every row of a judge:
    they are serialised once here, and a row costs one string and one hash. The
    keys are :func:`cache_key`'s, byte for byte (tests/evaluation/test_cache.py).
    """

    def __init__(self, *, provider: str, endpoint: str, template: ModelRequest) -> None:
        self._template = template
        self._provider = provider
        self._endpoint = endpoint
        self._head = b"".join((
            b'{"endpoint":', canonical_json(without_userinfo(endpoint)),
            b',"messages":[{"content":', canonical_json(template.system),
            b',"role":"system"},{"content":'))
        self._middle = b"".join((
            b',"role":"user"}],"model":', canonical_json(template.model),
            b',"parameters":', canonical_json({"max_output_tokens": template.max_output_tokens,
                                               "temperature": template.temperature}),
            b',"provider":', canonical_json(provider), b',"sample":'))
        self._tail = b"".join((
            b',"tool":', canonical_json({"description": template.tool_description,
                                         "name": template.tool_name,
                                         "schema": dict(template.tool_schema)}),
            b',"v":', str(KEY_VERSION).encode(), b"}"))

    def keys(self, request: ModelRequest, samples: int) -> list[str]:
        """The keys of samples ``0 .. samples - 1`` of ``request``."""
        if not self._same_judge(request):  # not one of ours: the general way
            return [cache_key(provider=self._provider, endpoint=self._endpoint,
                              request=request, sample=sample) for sample in range(samples)]
        start = hashlib.sha256(self._head)
        start.update(canonical_json(request.user))
        start.update(self._middle)
        keys = []
        for sample in range(samples):
            digest = start.copy()
            digest.update(str(sample).encode())
            digest.update(self._tail)
            keys.append(digest.hexdigest())
        return keys

    def _same_judge(self, request: ModelRequest) -> bool:
        template = self._template
        return (request.system == template.system and request.model == template.model
                and request.temperature == template.temperature
                and request.max_output_tokens == template.max_output_tokens
                and request.tool_name == template.tool_name
                and request.tool_description == template.tool_description
                and request.tool_schema is template.tool_schema)
