"""The output formats of every ``--format``, and the one way a ``--format`` is checked.

A utility: the run pipeline (``judges render``), the reports and the commands all
name formats by these members, and each command accepts the ones its renderers in
:mod:`introspection_cli.reporting.registry` can write.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from introspection_cli.errors import UsageError


class Format(StrEnum):
    """A format a command can print (or write to a file)."""

    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"
    #: JUnit XML and the HTML page: written only to a file (``--junit``, ``--html``).
    JUNIT = "junit"
    HTML = "html"
    #: GitHub workflow annotations and SARIF 2.1.0: ``check``'s formats for CI.
    GITHUB = "github"
    SARIF = "sarif"


#: What most commands print: text for people, JSON for scripts.
TEXT_OR_JSON = (Format.TEXT, Format.JSON)
#: ``check``'s formats, which its ``--format`` offers as choices in ``--help`` (the
#: registry's renderers for ``check``; a test holds the two equal).
CHECK_FORMATS = (Format.TEXT, Format.JSON, Format.GITHUB, Format.SARIF)


def parse_format(value: str, allowed: Iterable[Format], *, context: str | None = None
                 ) -> Format:
    """``--format VALUE`` as one of ``allowed``; a :class:`UsageError` (exit 2) naming them
    otherwise. ``context`` (``--dry-run``) says what restricts the formats, when not the
    command itself."""
    choices = tuple(allowed)
    if value in choices:
        return Format(value)
    where = f" for {context}" if context else ""
    if len(choices) == 1:
        raise UsageError(f"unknown format {value!r}{where}; the only format is {choices[0]}: "
                         f"pass --format {choices[0]}")
    raise UsageError(f"unknown format {value!r}{where}; use one of: "
                     f"{', '.join(choice.value for choice in choices)}")
