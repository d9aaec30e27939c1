"""Plain YAML scalars read by the YAML 1.2 core schema (not PyYAML's 1.1 rules).

Only ``true``/``false`` (in three spellings) are booleans, so ``on`` and ``yes``
stay strings; ``1:30`` is a string, not sexagesimal; dates are not parsed.
"""

from __future__ import annotations

import re
from typing import Any

_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False,
          "FALSE": False}
_INT = re.compile(r"[-+]?[0-9]+")
_OCT = re.compile(r"0o[0-7]+")
_HEX = re.compile(r"0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_INF = re.compile(r"[-+]?\.(inf|Inf|INF)")
_NAN = re.compile(r"\.(nan|NaN|NAN)")
_NUMBER_START = frozenset("0123456789+-.")


def resolve_core_scalar(text: str) -> Any:
    """Resolve a plain scalar by the YAML 1.2 core schema."""
    if text in _NULLS:
        return None
    boolean = _BOOLS.get(text)
    if boolean is not None:
        return boolean
    if text[0] not in _NUMBER_START:
        return text
    if _INT.fullmatch(text):
        return int(text)
    if _OCT.fullmatch(text):
        return int(text[2:], 8)
    if _HEX.fullmatch(text):
        return int(text[2:], 16)
    if _FLOAT.fullmatch(text):
        return float(text)
    if _INF.fullmatch(text):
        return float("-inf") if text.startswith("-") else float("inf")
    if _NAN.fullmatch(text):
        return float("nan")
    return text
