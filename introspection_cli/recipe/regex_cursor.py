"""The cursor under :class:`~.regex_syntax.PatternReader`: ``regex``'s ``Source``.

Its methods behave like ``regex._regex_core.Source``: in verbose mode ``get``,
``peek``, ``match`` and ``get_while`` step over whitespace and ``#`` comments,
even inside ``{m,n}``; ``raw`` reads do not. With them, the small constructs
that need nothing else: ``(?#...)`` comments, inline flags and ``{m,n}`` counts.
"""

from __future__ import annotations

import string

DIGITS = frozenset(string.digits)
NAME_END = frozenset(")>")
_INLINE_FLAGS = frozenset({*"abefiLmprsuwx", "V0", "V1"})
#: A count with more digits is past anything ``regex`` accepts (2**32 - 2): read as this.
_COUNT_DIGITS = 12
_HUGE_COUNT = 1_000_000_000_000


class PatternCursor:
    """A position in a pattern, with ``regex``'s rules for reading what comes next."""


    def __init__(self, pattern: str, *, verbose: bool, version1: bool) -> None:
        self.text = pattern
        self.end = len(pattern)
        self.pos = 0
        self.verbose = verbose  # the x flag where the cursor is
        self.version1 = version1  # (?V1): nested sets and set operators

    def charge(self, amount: int, at: int) -> None:
        """Called for text ``regex`` reads more than once (a ``\\g<`` without its ``>``:
        :meth:`~.regex_syntax.PatternReader._group_reference`)."""

    # -- the cursor ---------------------------------------------------------

    def _skip(self, pos: int) -> int:
        text, end = self.text, self.end
        while pos < end:
            char = text[pos]
            if char.isspace():
                pos += 1
            elif char == "#":
                newline = text.find("\n", pos)
                if newline < 0:
                    return end
                pos = newline
            else:
                break
        return pos

    def get(self, *, raw: bool = False) -> str:
        """The next character ("" at the end); verbose mode skips space first unless ``raw``."""
        pos = self.pos if raw or not self.verbose else self._skip(self.pos)
        if pos >= self.end:
            self.pos = self.end
            return ""
        self.pos = pos + 1
        return self.text[pos]

    def peek(self) -> str:
        pos = self._skip(self.pos) if self.verbose else self.pos
        return self.text[pos] if pos < self.end else ""

    def match(self, expected: str) -> bool:
        """Consume ``expected`` if it comes next (verbose mode: with space between characters)."""
        pos = self.pos
        for char in expected:
            if self.verbose:
                pos = self._skip(pos)
            if pos >= self.end or self.text[pos] != char:
                return False
            pos += 1
        self.pos = pos
        return True

    def get_while(self, chars: frozenset[str], *, include: bool = True,
                  keep_spaces: bool = False) -> str:
        """Consume characters in (``include``) or not in ``chars``; return them."""
        text, end, pos = self.text, self.end, self.pos
        skip = self.verbose and not keep_spaces
        taken = []
        while pos < end:
            char = text[pos]
            if skip and char.isspace():
                pos += 1
            elif skip and char == "#":
                newline = text.find("\n", pos)
                if newline < 0:
                    pos = end
                    break
                pos = newline
            elif (char in chars) == include:
                taken.append(char)
                pos += 1
            else:
                break
        self.pos = pos
        return "".join(taken)

    # -- small constructs ---------------------------------------------------

    def read_comment(self) -> None:
        """After ``(?#``: up to the first ``)`` that is not escaped."""
        while True:
            saved = self.pos
            char = self.get(raw=True)
            if not char or char == ")":
                break
            if char == "\\":
                self.get(raw=True)
        self.pos = saved
        self.match(")")

    def read_flag_set(self) -> list[str]:
        """Inline flag letters (``V0`` and ``V1`` count as one)."""
        found: list[str] = []
        while True:
            saved = self.pos
            flag = self.get()
            if flag == "V":
                flag += self.get()
            if flag not in _INLINE_FLAGS:
                self.pos = saved
                return found
            found.append(flag)

    def read_counts(self) -> int | None:
        """After ``{``: the minimum of ``{m}``, ``{m,}``, ``{,n}`` or ``{m,n}``.

        None (and nothing read) when the brace does not start a count.
        """
        saved = self.pos
        low = self.get_while(DIGITS)
        if self.match(","):
            self.get_while(DIGITS)
        elif not low:
            self.pos = saved
            return None
        if not self.match("}"):
            self.pos = saved
            return None
        if len(low) > _COUNT_DIGITS:
            return _HUGE_COUNT
        return int(low or "0")
