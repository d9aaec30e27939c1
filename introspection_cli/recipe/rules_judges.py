"""Rules for ``judges/<name>.yaml`` (SPEC §1.1), and the typed Judge they produce."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from introspection_cli.diagnostics import Diagnostic, Severity, error, warning
from introspection_cli.recipe.model import (
    Judge,
    LlmConfig,
    Matcher,
    ValueMatcher,
    is_kebab_name,
    kebab_suggestion,
)
from introspection_cli.recipe.regex_literal import (
    LiteralError,
    RegexBudget,
    literal_for,
    looks_like_pattern,
    parse_value,
)
from introspection_cli.recipe.schema_check import validate
from introspection_cli.recipe.source import read_yaml
from introspection_cli.recipe.yamlload import Document, Mark, quote

#: Plain (non-regex) values these fields can take; any other plain value never matches.
_CLOSED_VALUES = {("message", "role"): ("user", "assistant", "system"),
                  ("tool", "status"): ("ok", "error")}


def check_judge_file(path: Path, display: str) -> tuple[list[Diagnostic], Judge | None]:
    """Validate one judge file; the Judge is returned only when it has no errors."""
    document, found = read_yaml(path, display, what="judge file")
    if document is None:
        return found, None
    found.extend(validate(document, "judge", display))
    found.extend(_name_rules(document, path, display))
    matchers, gate_found = _gate(document, display)
    found.extend(gate_found)
    found.extend(_lint(document, display))
    found.extend(_provider_rules(document, display))
    if any(d.severity is Severity.ERROR for d in found):
        return found, None
    return found, _build(document.data, path, matchers)


def _name_rules(document: Document, path: Path, display: str) -> list[Diagnostic]:
    name = document.data.get("name")
    stem = path.name.removesuffix(".yaml").removesuffix(".yml")
    # A name that differs only by white space (a `|` block's line break) is invalid-name alone.
    if isinstance(name, str) and name and name != stem and name.strip() != stem:
        mark = document.positions.value(("name",))
        return [error(display, mark.line, mark.column, "name-mismatch",
                      f"judge name {quote(name)} does not match its file name "
                      f"{quote(path.name)}", _name_mismatch_hint(name, stem, path))]
    return []


def _name_mismatch_hint(name: str, stem: str, path: Path) -> str:
    """Only advice that ends in a valid judge: never a name that is itself invalid, never a
    rename onto a file that exists."""
    options = []
    target = f"{name}.yaml"
    if is_kebab_name(name) and not os.path.lexists(path.with_name(target)):
        options.append(f"rename the file to {target}")
    if is_kebab_name(stem):
        options.append(f"set name: {stem}")
    if options:
        return " or ".join(options)
    if is_kebab_name(name):  # a valid name whose file is taken, in a file with an invalid name
        return (f"{target} exists already, so this judge needs a name of its own: choose another "
                "lowercase kebab-case name and use it for both the name and the file")
    suggestion = kebab_suggestion(stem) or kebab_suggestion(name)
    if suggestion and not os.path.lexists(path.with_name(f"{suggestion}.yaml")):
        return (f"neither is lowercase kebab-case: set name: {suggestion} and rename the file "
                f"to {suggestion}.yaml")
    return ("neither is lowercase kebab-case: choose one such name (e.g. billing-request-"
            "handling) for both the name and the file")


def _gate(document: Document, display: str) -> tuple[list[Matcher] | None, list[Diagnostic]]:
    """Parse the ``on`` matchers' values; regex literals are compiled here, within one budget."""
    gate = document.data.get("on")
    if not isinstance(gate, list):
        return None, []
    matchers: list[Matcher] = []
    found: list[Diagnostic] = []
    budget = RegexBudget()
    for index, entry in enumerate(gate):
        if not isinstance(entry, dict) or not isinstance(entry.get("event"), str):
            continue
        match = entry.get("match") or {}
        fields: dict[str, ValueMatcher] = {}
        for field, raw in (match.items() if isinstance(match, dict) else ()):
            if not isinstance(raw, str):
                continue  # reported by the schema
            at = ("on", index, "match", field)
            parsed = parse_value(raw, budget)
            mark = document.positions.value(at)
            if isinstance(parsed, LiteralError):
                found.append(error(display, mark.line, mark.column, parsed.code,
                                   parsed.message, parsed.hint))
                continue
            fields[field] = parsed
            if not parsed.is_regex:
                found.extend(_plain_value_rules(entry["event"], field, raw, display, mark))
        line = document.positions.value(("on", index)).line
        matchers.append(Matcher(entry["event"], fields, line))
    return matchers, found


def _plain_value_rules(event: str, field: str, raw: str, display: str,
                       mark: Mark) -> list[Diagnostic]:
    """A plain value that can never match, or that reads like a regex but is compared exactly."""
    allowed = _CLOSED_VALUES.get((event, field))
    pattern_like = looks_like_pattern(raw)
    literal = literal_for(raw) if pattern_like else None
    if allowed and raw not in allowed:
        regex = f"the regex literal {literal}" if literal else "a /regex/"
        return [error(display, mark.line, mark.column, "invalid-value",
                      f"{field} {quote(raw)} never matches a {event} event",
                      f"use one of: {', '.join(allowed)}, or {regex}")]
    if not pattern_like:
        return []
    hint = (f"write {literal} to search {field} for the pattern" if literal else
            f"to search {field} for a pattern, write it between slashes (/.../); as a regex it "
            "does not compile yet, so fix it too")
    return [warning(display, mark.line, mark.column, "regex-without-slashes",
                    f"{field} {quote(raw)} reads like a regex, but without slashes it must equal "
                    f"the whole {field} exactly", hint)]


def _lint(document: Document, display: str) -> list[Diagnostic]:
    data = document.data
    instructions = data.get("instructions")
    if "on" in data or not isinstance(instructions, str) or "not_applicable" in instructions:
        return []
    mark = document.positions.value(("instructions",))
    return [warning(display, mark.line, mark.column, "missing-not-applicable",
                    "this judge has no gate and its instructions never mention "
                    "not_applicable",
                    "say when to return not_applicable, or add an `on:` gate")]


def _provider_rules(document: Document, display: str) -> list[Diagnostic]:
    """Settings the judge's provider ignores."""
    llm = document.data.get("llm")
    if not isinstance(llm, dict) or llm.get("provider") != "anthropic" or "temperature" not in llm:
        return []
    mark = document.positions.value(("llm", "temperature"))
    return [warning(display, mark.line, mark.column, "temperature-ignored",
                    "the anthropic provider does not send temperature (Anthropic's Messages "
                    "API takes no sampling parameters since API version 2026-10-21); this "
                    "value has no effect", "remove temperature, or use provider openai")]


def _build(data: dict[str, Any], path: Path, matchers: list[Matcher] | None) -> Judge:
    llm = data["llm"]
    max_tokens = llm.get("max_output_tokens")
    temperature = llm.get("temperature")
    return Judge(
        name=data["name"],
        description=data["description"],
        llm=LlmConfig(provider=llm["provider"], model=llm["model"],
                      temperature=float(temperature) if temperature is not None else None,
                      max_output_tokens=int(max_tokens) if max_tokens is not None else None),
        instructions=data["instructions"],
        path=path,
        gate=tuple(matchers) if matchers is not None else None,
    )
