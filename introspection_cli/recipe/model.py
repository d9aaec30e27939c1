"""Typed values for a validated recipe, as the judge runner consumes them.

Built by :func:`introspection_cli.recipe.checker.load_recipe` from files that
passed ``check``; the runner never sees a judge file that has errors.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

EventType = Literal["message", "tool", "feedback"]
Provider = Literal["openai", "anthropic"]

#: Fields a matcher may test, per event type (SPEC §1.1).
MATCHER_FIELDS: Mapping[str, tuple[str, ...]] = {
    "message": ("role", "text"),
    "tool": ("name", "input", "output", "status"),
    "feedback": ("rating", "comment"),
}

#: A judge or agent name: lowercase kebab-case, at most :data:`MAX_NAME_LENGTH` characters.
KEBAB_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
MAX_NAME_LENGTH = 64


def is_kebab_name(text: str) -> bool:
    """True when ``text`` is a valid judge (or agent) name, as the schemas' pattern says."""
    return len(text) <= MAX_NAME_LENGTH and KEBAB_NAME.fullmatch(text) is not None


def kebab_suggestion(text: str) -> str | None:
    """A valid name close to ``text`` (``Polite Tone!`` -> ``polite-tone``); None if none is."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    suggestion = "-".join(words)[:MAX_NAME_LENGTH].strip("-")
    return suggestion if suggestion and is_kebab_name(suggestion) else None


#: Flags allowed after a regex literal's closing slash, and the ``regex`` flag each sets.
REGEX_FLAG_NAMES: Mapping[str, str] = {"i": "IGNORECASE", "m": "MULTILINE", "s": "DOTALL",
                                       "x": "VERBOSE"}


@dataclass(frozen=True, slots=True)
class ValueMatcher:
    """One matcher field's value: exact string, or a ``/pattern/flags`` regex literal."""

    raw: str
    pattern: str | None = None  # set for a regex literal
    flags: str = ""

    @property
    def is_regex(self) -> bool:
        return self.pattern is not None


@dataclass(frozen=True)
class Matcher:
    """``{event: TYPE, match: {FIELD: VALUE}}``.

    Matches an event when the type is equal and every field matches.
    """

    event: EventType
    fields: Mapping[str, ValueMatcher] = field(default_factory=dict)
    line: int | None = None  # where the matcher starts in the judge file


@dataclass(frozen=True, slots=True)
class LlmConfig:
    provider: Provider
    model: str
    temperature: float | None = None
    max_output_tokens: int | None = None


@dataclass(frozen=True)
class Judge:
    """A judge file that passed validation."""

    name: str
    description: str
    llm: LlmConfig
    instructions: str
    path: Path
    gate: tuple[Matcher, ...] | None = None  # None: ungated

    @cached_property
    def calibration_path(self) -> Path:
        return self.path.with_name(f"{self.name}.calibration.jsonl")


@dataclass(frozen=True)
class Recipe:
    root: Path
    judges: Mapping[str, Judge]
    extra: Mapping[str, Any] = field(default_factory=dict)
