"""An export answer as the runtime sent it: each exported object becomes the exact line written.

The body is decoded leniently, keeping what a strict decoder would refuse or
lose: a repeated key, ``NaN``/``Infinity``, a number's literal text, a lone
surrogate. Each exported object is then re-written as one compact JSON line
holding all of that, so the fixture module judges exactly the bytes that would
be written, and ``conversations get`` and ``check`` always agree on a row. One
broken object is that object's problem, not the whole answer's.

Only the envelope (the top-level object and its two lists) must be
unambiguous: a repeated key there is a shape error. One ``errors`` entry that
cannot be read is reported (``unreadable``) and left out, like one broken object.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any


class BodyShapeError(ValueError):
    """The envelope cannot be read; the message says how (for the runtime's shape error)."""


@dataclass(frozen=True, slots=True)
class JsonObject:
    """A JSON object exactly as sent: every member in order, repeated keys included."""

    pairs: list[tuple[str, Any]]

    def unique(self, where: str) -> dict[str, Any]:
        """The members as a dict; a repeated key is a :class:`BodyShapeError` naming ``where``."""
        members = dict(self.pairs)
        if len(members) != len(self.pairs):
            seen: set[str] = set()
            for key, _ in self.pairs:
                if key in seen:
                    raise BodyShapeError(f"the key {_string(key[:60])} appears twice in {where}, "
                                         "so it is unclear which value is meant")
                seen.add(key)
        return members


@dataclass(frozen=True, slots=True)
class JsonLiteral:
    """A number (or ``NaN``/``Infinity``) as its literal text, so it is written unchanged."""

    text: str


@dataclass(frozen=True, slots=True)
class ExportBody:
    """The exported objects as JSON lines, the ``errors`` entries (members of each), and
    why each entry that is not an object or repeats a key was left out."""

    lines: list[bytes]
    errors: list[dict[str, Any]]
    unreadable: list[str]


_LENIENT = json.JSONDecoder(object_pairs_hook=JsonObject, parse_float=JsonLiteral,
                            parse_int=JsonLiteral, parse_constant=JsonLiteral)
_LONE_SURROGATE = re.compile("[\\ud800-\\udfff]")


def parse_export_body(content: bytes, key: str) -> ExportBody:
    """Split an export answer ``{key: [objects...], "errors": [...]}`` into lines and errors.

    Raises :class:`BodyShapeError` when the body is not such an object.
    """
    try:
        body = _LENIENT.decode(content.decode("utf-8"))
    except RecursionError:
        raise BodyShapeError("the body is nested too deeply to read") from None
    except ValueError:  # invalid UTF-8 or JSON
        raise BodyShapeError("the body is not a JSON object") from None
    if not isinstance(body, JsonObject):
        raise BodyShapeError("the body is not a JSON object")
    envelope = body.unique("the body")
    items = envelope.get(key)
    errors = envelope.get("errors", [])
    if (not isinstance(items, list) or not all(isinstance(item, JsonObject) for item in items)
            or not isinstance(errors, list)):
        raise BodyShapeError(f'expected {{"{key}": [objects...], "errors": [...]}}')
    entries: list[dict[str, Any]] = []
    unreadable: list[str] = []
    for number, entry in enumerate(errors, start=1):
        if not isinstance(entry, JsonObject):
            unreadable.append(f"entry {number} of `errors` is not an object")
            continue
        try:
            entries.append(entry.unique(f"entry {number} of `errors`"))
        except BodyShapeError as exc:
            unreadable.append(str(exc))
    return ExportBody(lines=[json_line(item) for item in items], errors=entries,
                      unreadable=unreadable)


def json_line(value: Any) -> bytes:
    """``value`` (as decoded here) as one compact UTF-8 JSON line, without a line break.

    Keys keep their order and repetitions, numbers their literal text; strings
    are written as UTF-8 except a lone surrogate, which stays a ``\\udXXX``
    escape (UTF-8 cannot hold it). Iterative, so nesting depth is no limit.
    """
    parts: list[str] = []
    pending: list[Any] = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, JsonLiteral):  # also the punctuation pushed below
            parts.append(item.text)
        elif isinstance(item, str):
            parts.append(_string(item))
        elif isinstance(item, JsonObject):
            pending.append(_CLOSE_OBJECT)
            for index in range(len(item.pairs) - 1, -1, -1):
                name, member = item.pairs[index]
                pending.append(member)
                pending.append(JsonLiteral(("," if index else "") + _string(name) + ":"))
            pending.append(_OPEN_OBJECT)
        elif isinstance(item, list):
            pending.append(_CLOSE_ARRAY)
            for index in range(len(item) - 1, -1, -1):
                pending.append(item[index])
                if index:
                    pending.append(_COMMA)
            pending.append(_OPEN_ARRAY)
        elif item is None or isinstance(item, bool):
            parts.append("null" if item is None else "true" if item else "false")
        else:
            raise TypeError(f"not a decoded JSON value: {type(item).__name__}")
    return "".join(parts).encode("utf-8")


def text_of(value: Any) -> str:
    """A decoded value for a message: a string as it is, anything else as its JSON."""
    return value if isinstance(value, str) else json_line(value).decode("utf-8")


_OPEN_OBJECT, _CLOSE_OBJECT = JsonLiteral("{"), JsonLiteral("}")
_OPEN_ARRAY, _CLOSE_ARRAY, _COMMA = JsonLiteral("["), JsonLiteral("]"), JsonLiteral(",")


def _string(text: str) -> str:
    encoded = json.dumps(text, ensure_ascii=False)
    if _LONE_SURROGATE.search(encoded) is None:
        return encoded
    return _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", encoded)
