"""The runtime API as the rest of the tool sees it: one protocol and its values.

The real implementation is :class:`introspection_cli.runtime.client.HttpRuntimeClient`;
anything with these three methods (a test fake, another transport) can stand in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from introspection_cli.errors import ConfigError

#: The runtime refuses more than this many conversation ids per export call (SPEC §3.3).
MAX_IDS_PER_EXPORT = 20


@dataclass(frozen=True, slots=True)
class Identity:
    """Who a token belongs to, as ``GET /v1/whoami`` reports it."""

    user: str
    org: str | None = None

    def describe(self) -> str:
        """``user`` or ``user (org)``, for messages."""
        return f"{self.user} ({self.org})" if self.org else self.user


@dataclass(frozen=True, slots=True)
class ExportError:
    """One conversation the runtime could not export (an entry of its ``errors`` array)."""

    conversation_id: str
    code: str
    message: str


@dataclass(frozen=True, slots=True)
class ExportBatch:
    """The answer to one export call: the exported objects, in the runtime's order, and errors.

    Each object is given as the one compact UTF-8 JSON line (no line break) it
    is written as, holding exactly what the runtime sent: keys in its order, a
    repeated key, ``NaN`` or a number's literal text kept, a lone surrogate as a
    ``\\udXXX`` escape. Verifying that line is verifying what gets written.
    """

    lines: list[bytes] = field(default_factory=list)
    errors: list[ExportError] = field(default_factory=list)
    #: ``errors`` entries that could not be read (not an object, no conversation id, a
    #: repeated key), each said once and otherwise ignored.
    unreadable_errors: list[str] = field(default_factory=list)


class TokenRejected(ConfigError):
    """The runtime answered 401: it does not accept the token sent to ``url``.

    What to do differs by caller (``login`` just got the token from the user; an
    export used a stored one), so callers may say it their own way from ``url`` and
    ``runtime_message`` (the runtime's reason, scrubbed of the token).
    """

    def __init__(self, message: str, *, url: str, runtime_message: str) -> None:
        super().__init__(message)
        self.url = url
        self.runtime_message = runtime_message


class RuntimeApi(Protocol):
    """The three runtime calls this tool makes (SPEC §3.3)."""

    @property
    def url(self) -> str:
        """The runtime's base URL, for messages."""
        ...

    def whoami(self) -> Identity:
        """``GET /v1/whoami``."""
        ...

    def export_judge_fixtures(self, conversation_ids: Sequence[str]) -> ExportBatch:
        """``POST /v1/judge-fixtures/export``: judge_fixture rows."""
        ...

    def export_conversations(self, conversation_ids: Sequence[str]) -> ExportBatch:
        """``POST /v1/conversations/export``: the runtime's ordinary conversation bundles."""
        ...
