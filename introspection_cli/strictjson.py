"""Strict JSON decoding: a duplicate key or a non-finite number is an error, not a guess.

``json.loads`` keeps the last of two equal keys (``{"verdict": "pass",
"verdict": "fail"}`` silently means fail) and accepts ``NaN``/``Infinity``.
Everything this tool reads from files or the network that decides a result
goes through :func:`loads`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class StrictJsonError(ValueError):
    """Valid-looking JSON this tool refuses; the message says why."""


class DuplicateKeyError(StrictJsonError):
    pass


class NonFiniteNumberError(StrictJsonError):
    pass


def _show(key: str) -> str:
    return json.dumps(key[:60], ensure_ascii=False)


def _object_without_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKeyError(f"the key {_show(key)} appears twice in one object, "
                                        "so it is unclear which value is meant")
            seen.add(key)
    return obj


def _reject_constant(name: str) -> float:
    raise NonFiniteNumberError(f"{name} is not a JSON number")


def _finite_float(literal: str) -> float:
    value = float(literal)
    if math.isinf(value):
        raise NonFiniteNumberError(f"the number {literal[:30]} is too large for a double")
    return value


#: Built once: ``json.loads(text, **hooks)`` would build a new decoder for every call.
DECODER = json.JSONDecoder(object_pairs_hook=_object_without_duplicate_keys,
                           parse_constant=_reject_constant, parse_float=_finite_float)


def loads(data: str | bytes) -> Any:
    """Decode one JSON document strictly.

    Raises :class:`StrictJsonError` for a duplicate key or a non-finite number,
    ``json.JSONDecodeError`` for invalid JSON, ``UnicodeDecodeError`` for bytes
    that are not UTF-8, and ``RecursionError`` for absurdly deep nesting (all
    are ``ValueError`` except the last).
    """
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    return DECODER.decode(text)


def first_object(text: str, accept: Callable[[Any], T | None]) -> T | None:
    """The first JSON value starting at a ``{`` in ``text`` (prose around a JSON reply)
    that ``accept`` turns into something other than None; None when there is none."""
    start = text.find("{")
    while start != -1:
        try:
            obj, _ = DECODER.raw_decode(text, start)
        except (ValueError, RecursionError):
            obj = None
        found = accept(obj) if obj is not None else None
        if found is not None:
            return found
        start = text.find("{", start + 1)
    return None
