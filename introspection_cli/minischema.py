"""A small validator for the JSON Schema subset our recipe schemas use.

``introspection check`` runs on every commit; importing ``jsonschema`` costs
about as much as the whole rest of a check. The schemas in ``schemas/`` stay
the contract (editors and ``check-jsonschema`` use them); this module
validates against them with Draft 2020-12 semantics for the keywords below,
and refuses a schema using any other keyword. A property test proves it
reports the same errors (path and keyword) as ``jsonschema`` except in two
places, on purpose (the test's oracle is ``jsonschema`` with these two meanings):

* ``pattern`` is an ECMA-262 regular expression (JSON Schema's dialect), not a
  Python one: ``$`` is the end of the string, where Python's ``$`` also matches
  before a final newline (so ``^[a-z]+$`` let ``"name\\n"`` through, as
  ``jsonschema`` does, python-jsonschema/jsonschema#576); ``.``, ``\\d``, ``\\s``
  and ``\\w`` keep their ECMA meanings too (:func:`python_pattern`).
* NaN (YAML's ``.nan``; JSON has none, so the specification never meets it) is
  outside every ``minimum`` and ``maximum``: ``jsonschema`` compares ``nan < 0``
  and ``nan > 2``, both false, and lets ``temperature: .nan`` through.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

_ANNOTATIONS = frozenset({"$schema", "$id", "title", "description", "$defs", "default",
                          "examples"})
_SUPPORTED = frozenset({"$ref", "type", "enum", "const", "properties", "additionalProperties",
                        "required", "items", "minItems", "maxItems", "minLength", "maxLength",
                        "pattern", "minimum", "maximum", "allOf", "anyOf", "if", "then"})


class UnsupportedSchema(Exception):
    """The schema uses a keyword this validator does not implement."""


@dataclass(frozen=True, slots=True)
class SchemaError:
    """One failed keyword; attribute names follow ``jsonschema.ValidationError``."""

    absolute_path: tuple[str | int, ...]
    validator: str  # the keyword
    validator_value: Any
    instance: Any
    schema: dict[str, Any]
    message: str


Path = tuple[str | int, ...]
#: One keyword's check: (validator, schema, keyword value, instance, path, errors found).
Check = Callable[["Validator", dict[str, Any], Any, Any, Path, list[SchemaError]], None]


class Validator:
    """Validates instances against one root schema (local ``$ref`` only).

    Each subschema's checks are looked up once (:meth:`_plan`) and every check
    appends to one list rather than yielding: ``check`` validates every judge
    file on every commit, and generators nested once per schema level cost more
    than the checks themselves.
    """

    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        _check_keywords(root)
        # By id(): every subschema lives inside ``root``, which this object keeps alive.
        self._plans: dict[int, list[tuple[Check, Any]]] = {}
        self._refs: dict[str, dict[str, Any]] = {}

    def iter_errors(self, instance: Any) -> Iterator[SchemaError]:
        found: list[SchemaError] = []
        self.collect(self.root, instance, (), found)
        return iter(found)

    def collect(self, schema: dict[str, Any], instance: Any, path: Path,
                found: list[SchemaError]) -> None:
        """Append every error of ``instance`` (at ``path``) against ``schema`` to ``found``."""
        plan = self._plans.get(id(schema))
        if plan is None:
            plan = self._plans[id(schema)] = [(_KEYWORDS[keyword], value)
                                              for keyword, value in schema.items()
                                              if keyword in _KEYWORDS]
        for check, value in plan:
            check(self, schema, value, instance, path, found)

    def is_valid(self, schema: dict[str, Any], instance: Any) -> bool:
        found: list[SchemaError] = []
        self.collect(schema, instance, (), found)
        return not found

    def resolve(self, ref: str) -> dict[str, Any]:
        node = self._refs.get(ref)
        if node is None:
            node = self._refs[ref] = self._resolve(ref)
        return node

    def _resolve(self, ref: str) -> dict[str, Any]:
        if not ref.startswith("#/"):
            raise UnsupportedSchema(f"only local $ref is supported, not {ref}")
        node: Any = self.root
        for part in ref[2:].split("/"):
            node = node[part]
        return node  # type: ignore[no-any-return]


def _check_keywords(schema: Any) -> None:
    if isinstance(schema, list):
        for item in schema:
            _check_keywords(item)
        return
    if not isinstance(schema, dict):
        return
    for keyword, value in schema.items():
        if keyword in ("properties", "$defs"):
            for sub in value.values():
                _check_keywords(sub)
        elif keyword in ("enum", "const", "required"):
            continue
        elif keyword.startswith("x-") or keyword in _ANNOTATIONS:
            if keyword == "$defs":
                _check_keywords(value)
        elif keyword == "pattern":
            _compiled(value)  # raises UnsupportedSchema now rather than mid-validation
        elif keyword in _SUPPORTED:
            _check_keywords(value)
        else:
            raise UnsupportedSchema(f"keyword {keyword!r} is not supported")


def _error(keyword: str, value: Any, instance: Any, schema: dict[str, Any],
           path: tuple[str | int, ...], message: str) -> SchemaError:
    return SchemaError(path, keyword, value, instance, schema, message)


def _is_type(instance: Any, name: str) -> bool:
    if name == "string":
        return isinstance(instance, str)
    if name == "object":
        return isinstance(instance, dict)
    if name == "array":
        return isinstance(instance, list)
    if name == "boolean":
        return isinstance(instance, bool)
    if name == "null":
        return instance is None
    if isinstance(instance, bool):
        return False
    if name == "integer":
        return isinstance(instance, int) or (isinstance(instance, float) and instance.is_integer())
    return name == "number" and isinstance(instance, int | float)


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_equal, a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return bool(a == b)


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(python_pattern(pattern))


#: ECMA-262 WhiteSpace and LineTerminator: what ``\s`` means in a JSON Schema pattern.
_ECMA_SPACE = "\t\n\v\f\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_ESCAPES = {"d": "[0-9]", "D": "[^0-9]", "w": "[A-Za-z0-9_]", "W": "[^A-Za-z0-9_]",
            "s": f"[{_ECMA_SPACE}]", "S": f"[^{_ECMA_SPACE}]"}
_CLASS_ESCAPES = {"d": "0-9", "w": "A-Za-z0-9_", "s": _ECMA_SPACE}
_UNTRANSLATED = frozenset("bBkcpPDSW")  # after a backslash; D S W only inside a class
_GROUPS = ("(?:", "(?=", "(?!")


def python_pattern(ecma: str) -> str:
    """An ECMA-262 ``pattern`` as a Python ``re`` pattern with the same meaning.

    ``$`` becomes ``\\Z`` (the end of the string), ``.`` excludes every line
    terminator, ``\\d`` and ``\\w`` are ASCII and ``\\s`` is ECMA's white space.
    Raises :class:`UnsupportedSchema` for syntax this does not translate (word
    boundaries, named groups, property escapes...).
    """
    out: list[str] = []
    pos = 0
    while pos < len(ecma):
        char = ecma[pos]
        if char == "\\":
            escaped = ecma[pos + 1:pos + 2]
            if escaped in _ESCAPES:
                out.append(_ESCAPES[escaped])
            elif not escaped or escaped in _UNTRANSLATED:
                raise UnsupportedSchema(f"pattern {ecma!r}: \\{escaped} is not supported")
            else:
                out.append(ecma[pos:pos + 2])
            pos += 2
        elif char == "[":
            pos = _translate_class(ecma, pos, out)
        elif char == "(" and ecma.startswith("(?", pos) and not ecma.startswith(_GROUPS, pos):
            raise UnsupportedSchema(f"pattern {ecma!r}: only (?: (?= (?! groups are supported")
        else:
            out.append({"$": "\\Z", ".": "[^\n\r\u2028\u2029]"}.get(char, char))
            pos += 1
    return "".join(out)


def _translate_class(ecma: str, start: int, out: list[str]) -> int:
    """Translate the class ``[...]`` at ``start`` into ``out``; return the position after it."""
    pos = start + 1
    negated = ecma.startswith("^", pos)
    pos += negated
    body: list[str] = []
    while pos < len(ecma) and ecma[pos] != "]":
        char = ecma[pos]
        if char == "\\":
            escaped = ecma[pos + 1:pos + 2]
            in_range = (len(body) > 1 and body[-1] == "-") or (
                ecma.startswith("-", pos + 2) and not ecma.startswith("-]", pos + 2))
            if escaped in _CLASS_ESCAPES and not in_range:
                body.append(_CLASS_ESCAPES[escaped])
            elif not escaped or escaped in _CLASS_ESCAPES or (
                    escaped in _UNTRANSLATED and escaped != "b"):
                raise UnsupportedSchema(f"pattern {ecma!r}: [\\{escaped}] is not supported")
            else:
                body.append(ecma[pos:pos + 2])  # [\b] is a backspace in both
            pos += 2
        else:
            body.append("\\" + char if char in "[&~|" else char)  # literal in ECMA
            pos += 1
    if pos >= len(ecma):
        raise UnsupportedSchema(f"pattern {ecma!r}: unterminated character class")
    if not body:  # ECMA's [] matches nothing and [^] anything; Python has neither
        out.append("(?s:.)" if negated else "(?!)")
    else:
        out.append(f"[{'^' if negated else ''}{''.join(body)}]")
    return pos + 1


def _type(v: Validator, s: dict[str, Any], value: Any, inst: Any, path: Path,
          found: list[SchemaError]) -> None:
    names = value if isinstance(value, list) else [value]
    if not any(_is_type(inst, n) for n in names):
        found.append(_error("type", value, inst, s, path, f"{inst!r} is not of type {value!r}"))


def _enum(v: Validator, s: dict[str, Any], value: Any, inst: Any, path: Path,
          found: list[SchemaError]) -> None:
    if not any(_equal(inst, option) for option in value):
        found.append(_error("enum", value, inst, s, path, f"{inst!r} is not one of {value!r}"))


def _const(v: Validator, s: dict[str, Any], value: Any, inst: Any, path: Path,
           found: list[SchemaError]) -> None:
    if not _equal(inst, value):
        found.append(_error("const", value, inst, s, path, f"{value!r} was expected"))


def _properties(v: Validator, s: dict[str, Any], value: Any, inst: Any, path: Path,
                found: list[SchemaError]) -> None:
    if isinstance(inst, dict):
        for key, sub in value.items():
            if key in inst:
                v.collect(sub, inst[key], (*path, key), found)


def _additional(v: Validator, s: dict[str, Any], value: Any, inst: Any, path: Path,
                found: list[SchemaError]) -> None:
    if not isinstance(inst, dict):
        return
    known = s.get("properties", {})
    extra = [k for k in inst if k not in known]
    if value is False and extra:
        found.append(_error("additionalProperties", value, inst, s, path,
                            "Additional properties are not allowed "
                            f"({', '.join(map(repr, extra))})"))
    elif isinstance(value, dict):
        for key in extra:
            v.collect(value, inst[key], (*path, key), found)


def _required(v: Validator, s: dict[str, Any], value: Any, inst: Any, path: Path,
              found: list[SchemaError]) -> None:
    if isinstance(inst, dict):
        for key in value:
            if key not in inst:
                found.append(_error("required", value, inst, s, path,
                                    f"{key!r} is a required property"))


def _items(v: Validator, s: dict[str, Any], value: Any, inst: Any, path: Path,
           found: list[SchemaError]) -> None:
    if isinstance(inst, list):
        for index, item in enumerate(inst):
            v.collect(value, item, (*path, index), found)


def _bound(keyword: str, kind: type | tuple[type, ...], measure: Callable[[Any], Any],
           fails: Callable[[Any, Any], bool]) -> Check:
    def check(v: Validator, s: dict[str, Any], value: Any, inst: Any, path: Path,
              found: list[SchemaError]) -> None:
        if isinstance(inst, kind) and not isinstance(inst, bool) and fails(measure(inst), value):
            found.append(_error(keyword, value, inst, s, path,
                                f"{inst!r} fails {keyword} {value!r}"))
    return check


def _pattern(v: Validator, s: dict[str, Any], value: Any, inst: Any, path: Path,
             found: list[SchemaError]) -> None:
    if isinstance(inst, str) and not _compiled(value).search(inst):
        found.append(_error("pattern", value, inst, s, path,
                            f"{inst!r} does not match {value!r}"))


def _ref(v: Validator, s: dict[str, Any], value: Any, inst: Any, path: Path,
         found: list[SchemaError]) -> None:
    v.collect(v.resolve(value), inst, path, found)


def _all_of(v: Validator, s: dict[str, Any], value: Any, inst: Any, path: Path,
            found: list[SchemaError]) -> None:
    for sub in value:
        v.collect(sub, inst, path, found)


def _any_of(v: Validator, s: dict[str, Any], value: Any, inst: Any, path: Path,
            found: list[SchemaError]) -> None:
    if not any(v.is_valid(sub, inst) for sub in value):
        found.append(_error("anyOf", value, inst, s, path,
                            f"{inst!r} is not valid under any schema"))


def _if(v: Validator, s: dict[str, Any], value: Any, inst: Any, path: Path,
        found: list[SchemaError]) -> None:
    if "then" in s and v.is_valid(value, inst):
        v.collect(s["then"], inst, path, found)


_KEYWORDS: dict[str, Check] = {
    "$ref": _ref, "type": _type, "enum": _enum, "const": _const, "properties": _properties,
    "additionalProperties": _additional, "required": _required, "items": _items,
    "minItems": _bound("minItems", list, len, lambda m, b: m < b),
    "maxItems": _bound("maxItems", list, len, lambda m, b: m > b),
    "minLength": _bound("minLength", str, len, lambda m, b: m < b),
    "maxLength": _bound("maxLength", str, len, lambda m, b: m > b),
    # "not in range" rather than "below" / "above": NaN is in no range (module docstring)
    "minimum": _bound("minimum", (int, float), lambda x: x, lambda m, b: not m >= b),
    "maximum": _bound("maximum", (int, float), lambda x: x, lambda m, b: not m <= b),
    "pattern": _pattern, "allOf": _all_of, "anyOf": _any_of, "if": _if,
}
