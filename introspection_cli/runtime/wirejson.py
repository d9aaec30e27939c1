"""An export answer as the runtime sent it: each exported object becomes the exact line written.

The body is decoded leniently, keeping what a strict decoder would refuse or
lose: a repeated key, ``NaN``/``Infinity``, a number's literal text, a lone
surrogate. Each exported object is then re-written as one compact JSON line
holding all of that, so the fixture module judges exactly the bytes that would
be written, and ``conversations get`` and ``check`` always agree on a row. One
broken object is that object's problem, not the whole answer's: the body is
decoded without recursion, so not even nesting depth fails it as a whole, and
bytes that are not UTF-8 fail only the object holding them: its line is the
exact bytes sent, which the fixture module rejects as ``check`` would.

Only the envelope (the top-level object and its two lists) must be
unambiguous: a repeated key there is a shape error. One ``errors`` entry that
cannot be read is reported (``unreadable``) and left out, like one broken object.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any


class BodyShapeError(ValueError):
    """The envelope cannot be read; the message says how (for the runtime's shape error)."""


@dataclass(frozen=True, slots=True)
class JsonObject:
    """A JSON object exactly as sent: every member in order, repeated keys included.

    ``span`` is where it stands in the decoded text (start, end), for the raw bytes
    of an object that holds invalid UTF-8.
    """

    pairs: list[tuple[str, Any]]
    span: tuple[int, int] = field(default=(0, 0), compare=False)

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


_LONE_SURROGATE = re.compile("[\\ud800-\\udfff]")


def parse_export_body(content: bytes, key: str) -> ExportBody:
    """Split an export answer ``{key: [objects...], "errors": [...]}`` into lines and errors.

    Raises :class:`BodyShapeError` when the body is not such an object.
    """
    try:
        text, raw = content.decode("utf-8"), False
    except UnicodeDecodeError:  # kept as escaped bytes: only the objects holding them fail
        text, raw = content.decode("utf-8", "surrogateescape"), True
    try:
        body = decode_lenient(text)
    except ValueError:
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
    lines = [_sent_line(item, text) if raw else json_line(item) for item in items]
    return ExportBody(lines=lines, errors=entries, unreadable=unreadable)


_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")  # a byte that was not UTF-8 (surrogateescape)


def _sent_line(item: JsonObject, text: str) -> bytes:
    """The object's line; for one holding bytes that are not UTF-8, exactly the bytes sent,
    which the fixture module rejects as ``check`` would (``fixture-json``)."""
    start, end = item.span
    sent = text[start:end]
    if _ESCAPED_BYTE.search(sent) is None:
        return json_line(item)
    return sent.encode("utf-8", "surrogateescape")


_WHITESPACE = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_WORDS: tuple[tuple[str, Any], ...] = (
    ("null", None), ("true", True), ("false", False), ("NaN", JsonLiteral("NaN")),
    ("Infinity", JsonLiteral("Infinity")), ("-Infinity", JsonLiteral("-Infinity")))
_STRINGS = json.JSONDecoder()
_ARRAY = object()  # marks an array frame on the decoder's stack (an object frame holds a key)


def decode_lenient(text: str) -> Any:
    """Decode one JSON document as the stdlib decoder would with every hook set to keep
    things as sent (:class:`JsonObject`, :class:`JsonLiteral`), but iteratively.

    The stdlib decoder recurses, so a body holding one deeply nested object failed as a
    whole; here nesting depth is no limit, and each exported object's own line is judged
    by the fixture module exactly as ``check`` judges it. Raises ``ValueError``.
    """
    frames: list[list[Any]] = []  # the members or items read so far, innermost last
    keys: list[Any] = []  # per frame: the current member's key, or _ARRAY
    starts: list[int] = []  # per frame: where its bracket is
    index = _skip(text, 0)
    while True:
        start = index
        value, index, opened = _value(text, index)
        if opened is not None:  # a non-empty object or array: read its first member
            starts.append(start)
            frames.append([])
            keys.append(_ARRAY if opened == "[" else None)
            if opened == "{":
                keys[-1], index = _key(text, index)
            continue
        while True:  # a complete value: add it to its container, closing those that end
            if not frames:
                if _skip(text, index) != len(text):
                    raise ValueError(f"extra data at character {index}")
                return value
            key = keys[-1]
            frames[-1].append(value if key is _ARRAY else (key, value))
            index = _skip(text, index)
            char = text[index:index + 1]
            if char == ",":
                index = _skip(text, index + 1)
                if key is not _ARRAY:
                    keys[-1], index = _key(text, index)
                break
            if char != ("]" if key is _ARRAY else "}"):
                raise ValueError(f"expecting ',' or a closing bracket at character {index}")
            index += 1
            items = frames.pop()
            keys.pop()
            span = (starts.pop(), index)
            value = items if key is _ARRAY else JsonObject(items, span)


def _skip(text: str, index: int) -> int:
    """The index of the first character at or after ``index`` that is not JSON whitespace."""
    match = _WHITESPACE.match(text, index)
    return match.end() if match else index


def _value(text: str, index: int) -> tuple[Any, int, str | None]:
    """The scalar or empty container at ``index`` and where it ends, or, for a non-empty
    object or array, ``(None, index of its first member, "{" or "[")``."""
    char = text[index:index + 1]
    if char in ("{", "["):
        after = _skip(text, index + 1)
        if text[after:after + 1] == ("}" if char == "{" else "]"):
            return (JsonObject([], (index, after + 1)) if char == "{" else []), after + 1, None
        return None, after, char
    if char == '"':
        string, end = _STRINGS.raw_decode(text, index)  # a string: no recursion
        return string, end, None
    number = _NUMBER.match(text, index)
    if number is not None:
        return JsonLiteral(number.group()), number.end(), None
    for word, value in _WORDS:
        if text.startswith(word, index):
            return value, index + len(word), None
    raise ValueError(f"expecting a value at character {index}")


def _key(text: str, index: int) -> tuple[str, int]:
    """A member's key at ``index`` and the index of its value (after the colon)."""
    if text[index:index + 1] != '"':
        raise ValueError(f"expecting a property name at character {index}")
    key, index = _STRINGS.raw_decode(text, index)
    index = _skip(text, index)
    if text[index:index + 1] != ":":
        raise ValueError(f"expecting ':' at character {index}")
    return key, _skip(text, index + 1)


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
