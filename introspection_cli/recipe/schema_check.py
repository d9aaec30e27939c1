"""JSON Schema validation of loaded YAML, with errors turned into positioned Diagnostics."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

from introspection_cli.diagnostics import Diagnostic, error, escape_text
from introspection_cli.minischema import SchemaError as ValidationError
from introspection_cli.minischema import Validator
from introspection_cli.recipe.model import kebab_suggestion
from introspection_cli.recipe.yamlload import Document, PathT, quote
from introspection_cli.resources import load_schema

_TYPE_NAMES = {"string": "a string", "object": "a mapping", "array": "a list",
               "integer": "an integer", "number": "a number", "boolean": "true or false",
               "null": "empty"}


@cache
def _validator(name: str) -> Validator:
    return Validator(load_schema(name))


def validate(document: Document, schema_name: str, display_path: str) -> list[Diagnostic]:
    """Validate ``document`` against ``schemas/<schema_name>.schema.json``."""
    found: dict[Diagnostic, None] = {}  # ordered set: one error per missing key
    for err in _validator(schema_name).iter_errors(document.data):
        found.update(dict.fromkeys(_diagnostics(err, document, display_path)))
    return list(found)


def describe_path(path: PathT) -> str:
    """``('on', 0, 'match', 'role')`` -> ``on[0].match.role`` (keys escaped, see escape_text)."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            key = escape_text(part if len(part) <= 40 else part[:39] + "…")
            text += f".{key}" if text else key
    return text or "the top level"


def describe_type(value: Any) -> str:
    if value is None:
        return "empty"
    if isinstance(value, bool):
        return "true/false"
    return {dict: "a mapping", list: "a list", str: "a string", int: "an integer",
            float: "a number"}.get(type(value), type(value).__name__)


def _diagnostics(err: ValidationError, doc: Document, path_text: str) -> Iterator[Diagnostic]:
    path: PathT = tuple(err.absolute_path)
    where = describe_path(path)
    where_in = f" in {where}" if path else ""
    keyword = str(err.validator)
    wanted: Any = err.validator_value
    schema = err.schema if isinstance(err.schema, dict) else {}
    mark = doc.positions.value(path)

    def make(code: str, message: str, hint: str | None = None, at: PathT | None = None) -> (
            Diagnostic):
        pos = doc.positions.key(at) if at is not None else mark
        return error(path_text, pos.line, pos.column, code, message, hint)

    if keyword == "additionalProperties" and isinstance(err.instance, dict):
        allowed = sorted(schema.get("properties", {}))
        for key in err.instance:
            if key in allowed:
                continue
            close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
            hint = f"did you mean '{close[0]}'?" if close else (
                f"allowed keys here: {', '.join(allowed)}" if allowed else None)
            yield make("unknown-key", f"unknown key {quote(key)}{where_in}", hint,
                       at=(*path, key))
    elif keyword == "required" and isinstance(err.instance, dict):
        for key in schema.get("required", []):
            if key not in err.instance:
                at = path if path else None
                yield make("missing-key", f"missing required key '{key}'{where_in}",
                           f"add '{key}:'", at=at)
    elif keyword == "type":
        names = [_TYPE_NAMES.get(str(t), str(t))
                 for t in (wanted if isinstance(wanted, list) else [wanted])]
        hint = "quote the value to make it a string" if "a string" in names else None
        yield make("wrong-type", f"{where} must be {' or '.join(names)}, "
                   f"not {describe_type(err.instance)}", hint)
    elif keyword in ("enum", "const"):
        options: list[Any] = list(wanted) if keyword == "enum" else [wanted]
        close = difflib.get_close_matches(str(err.instance), [str(o) for o in options], n=1)
        yield make("invalid-value", f"{where} is {_shown(err.instance)}; expected one of: "
                   f"{', '.join(str(o) for o in options)}",
                   f"did you mean '{close[0]}'?" if close else None)
    else:
        yield _constraint(err, keyword, where, schema, make)


_Make = Callable[..., Diagnostic]


def _constraint(err: ValidationError, keyword: str, where: str, schema: dict[str, Any],
                make: _Make) -> Diagnostic:
    value: Any = err.validator_value
    if keyword == "pattern":
        code = schema.get("x-introspection-code", "invalid-value")
        if code == "empty-value":
            return make(code, f"{where} must not be blank")
        if code == "invalid-name":
            example = (kebab_suggestion(err.instance) if isinstance(err.instance, str) else None)
            hint = ("use ASCII lowercase letters, digits and single hyphens, "
                    f"e.g. {example or 'billing-request-handling'}")
            if isinstance(err.instance, str) and err.instance.endswith("\n"):
                hint = ("remove the line break at its end: a `|` block keeps one, so write "
                        "the name on the key's line")
            return make(code, f"{where} {_shown(err.instance)} is not lowercase kebab-case", hint)
        return make(code, f"{where} {_shown(err.instance)} does not match {value}")
    if keyword in ("minLength", "minItems") and value == 1:
        return make("empty-value", f"{where} must not be empty")
    if keyword in ("maxLength", "maxItems"):
        return make("too-long", f"{where} is longer than {value} characters")
    if keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        bounds = f"between {schema.get('minimum')} and {schema.get('maximum')}"
        if "maximum" not in schema:
            bounds = f"at least {schema.get('minimum')}"
        return make("out-of-range", f"{where} is {_shown(err.instance)}; it must be {bounds}")
    return make("invalid-value", f"{where}: {escape_text(err.message)}")


def _shown(value: Any) -> str:
    """A value from the user's file as a message shows it."""
    return quote(value) if isinstance(value, str) else escape_text(repr(value)[:80])
