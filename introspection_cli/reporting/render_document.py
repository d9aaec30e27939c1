"""The JSON of a command whose output is its document (certify, estimate, doctor, the dry
run): indented, non-ASCII kept readable, a trailing newline."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Protocol


class Documented(Protocol):
    """A result that has a JSON document."""

    def as_json(self) -> Any: ...


def render_document(value: Documented | Mapping[str, Any]) -> str:
    """``value``'s JSON document (``value.as_json()``, or ``value`` itself) as JSON text."""
    document = value if isinstance(value, Mapping) else value.as_json()
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
