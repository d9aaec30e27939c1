"""The one value type every rule reports: a :class:`Diagnostic`."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


def escape_text(text: str) -> str:
    """``text`` with each non-printable character (newline, tab, other controls, bidi
    overrides, lone surrogates) written as a Python escape such as ``\\n``.

    User text in a message goes through here (or ``recipe.yamlload.quote``), so a key or a
    name cannot break a diagnostic's single line (SPEC §3.1) or a reporter's format.
    """
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem found in one file.

    ``line`` and ``column`` are 1-based; ``None`` when the problem has no
    position (a missing file). ``path`` is the path as it should be shown to
    the user. ``hint`` says what to do about it, when that is not obvious
    from the message.
    """

    path: str
    line: int | None
    column: int | None
    severity: Severity
    code: str
    message: str
    hint: str | None = None

    @property
    def location(self) -> str:
        """``path:line:col``, leaving out what is unknown."""
        if self.line is None:
            return self.path
        if self.column is None:
            return f"{self.path}:{self.line}"
        return f"{self.path}:{self.line}:{self.column}"

    def format_line(self, *, severity: str | None = None, hint: bool = True) -> str:
        """``path:line:col: severity[code] message (hint)``, the text form of every command.

        ``severity`` replaces the severity's text (a reporter's coloured version).
        """
        shown = severity if severity is not None else self.severity.value
        suffix = f" ({escape_text(self.hint)})" if hint and self.hint else ""
        # Rules quote user text escaped already; this keeps every diagnostic on one
        # line whatever a message or a file name holds (SPEC §3.1).
        return (f"{escape_text(self.location)}: {shown}[{self.code}] "
                f"{escape_text(self.message)}{suffix}")

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.path, self.line or 0, self.column or 0, self.code)

    def as_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "severity": self.severity.value,
            "code": self.code,
            "message": self.message,
            "hint": self.hint,
        }


def error(path: str, line: int | None, column: int | None, code: str, message: str,
          hint: str | None = None) -> Diagnostic:
    """An error; user text in ``message`` and ``hint`` is escaped (:func:`escape_text`)."""
    return Diagnostic(path, line, column, Severity.ERROR, code, escape_text(message),
                      None if hint is None else escape_text(hint))


def warning(path: str, line: int | None, column: int | None, code: str, message: str,
            hint: str | None = None) -> Diagnostic:
    """A warning; user text in ``message`` and ``hint`` is escaped (:func:`escape_text`)."""
    return Diagnostic(path, line, column, Severity.WARNING, code, escape_text(message),
                      None if hint is None else escape_text(hint))
