"""Reading a pattern token by token the way the ``regex`` module's parser does.

:class:`PatternReader` mirrors ``regex._regex_core``: its cursor
(:mod:`~.regex_cursor`) behaves like ``Source``, and each ``read_*`` method
consumes exactly what the matching ``parse_*`` function consumes: escapes,
character sets (nested sets and set operations in version 1), POSIX classes
and fuzzy constraints (the cursor reads ``{m,n}`` counts, inline flags and
``(?#...)`` comments). It keeps no parse tree; :mod:`regex_cost` builds on it.
On input that ``regex`` rejects it still moves forward, never raising.
"""

from __future__ import annotations

import string
from typing import Literal

from introspection_cli.recipe.regex_cursor import DIGITS, NAME_END, PatternCursor

_HEX = frozenset(string.hexdigits)
_OCTAL = frozenset(string.octdigits)
_ALPHA = frozenset(string.ascii_letters)
_ALNUM = _ALPHA | DIGITS
_NAMED_CHAR = _ALNUM | frozenset(" -")
_PROPERTY_NAME = _ALNUM | frozenset(" &_-.")
_PROPERTY_VALUE = _ALNUM | frozenset(" &_-./")
_HEX_LENGTH = {"x": 2, "u": 4, "U": 8}
_SET_OPERATORS = ("||", "~~", "&&", "--")
_SET_CHARACTER_ESCAPES = frozenset("abfnrtv")  # other letters in a set: \d \w ..., or an error

SetItem = Literal["character", "member", "nested", "end"]


class _NotFuzzy(Exception):
    pass


class PatternReader(PatternCursor):
    """A pattern read construct by construct, as ``regex``'s ``parse_*`` functions do."""

    # -- fuzzy constraints: parse_fuzzy and its helpers ----------------------

    def read_fuzzy(self) -> bool:
        """After ``{``: a fuzzy constraint such as ``{e<=1}``; False (nothing read) if not one."""
        saved = self.pos
        seen: set[str] = set()
        try:
            self._fuzzy_item(seen)
            while self.match(","):
                self._fuzzy_item(seen)
        except _NotFuzzy:
            self.pos = saved
            return False
        if self.match(":"):
            char = self.get()
            if char == "\\":
                self.read_escape(in_set=False)
            elif char == "[":
                self.read_set()
        self.match("}")
        return True

    def _fuzzy_item(self, seen: set[str]) -> None:
        saved = self.pos
        try:
            self._cost_constraint(seen)
        except _NotFuzzy:
            self.pos = saved
            self._cost_equation(seen)

    def _cost_constraint(self, seen: set[str]) -> None:
        saved = self.pos
        char = self.get()
        if char in _ALPHA:
            _constraint(seen, char)
            if self._compare() is not None:
                self.get_while(DIGITS)
        elif char in DIGITS:
            self.pos = saved
            self.get_while(DIGITS)
            if self._compare() is None:
                raise _NotFuzzy
            _constraint(seen, self.get())
            if self._compare() is None:
                raise _NotFuzzy
            self.get_while(DIGITS)
        else:
            raise _NotFuzzy

    def _compare(self) -> bool | None:
        if self.match("<="):
            return True
        if self.match("<"):
            return False
        return None

    def _cost_equation(self, seen: set[str]) -> None:
        self._cost_term()
        while self.match("+"):
            self._cost_term()
        if self._compare() is None:
            raise _NotFuzzy
        self.get_while(DIGITS)
        seen.add("cost")

    def _cost_term(self) -> None:
        self.get_while(DIGITS)
        if self.get() not in "dis":  # str containment: "" passes, as in regex
            raise _NotFuzzy

    # -- escapes ------------------------------------------------------------

    def read_escape(self, *, in_set: bool) -> tuple[bool, int]:
        """After ``\\``: mirrors ``parse_escape``.

        Returns whether it is a single character (a set range needs one) and how
        many elements it compiles to: a ``\\g<name>`` group reference counts its
        characters, since regex reads them as literals while the group is open.
        """
        char = self.get(raw=True)
        if char in _HEX_LENGTH:
            for _ in range(_HEX_LENGTH[char]):
                saved = self.pos
                if self.get() not in _HEX:
                    self.pos = saved
                    break
            return True, 1
        if char == "g" and not in_set:
            return self._group_reference()
        if char == "R" and not in_set:  # a line break: an atomic group of two alternatives
            return False, 3
        if char == "N":
            self._named_character()
            return True, 1
        if char in ("p", "P"):
            return self._property(), 1
        if char in _ALPHA:
            return in_set and char in _SET_CHARACTER_ESCAPES, 1
        if char in DIGITS:
            return self._numeric_escape(char, in_set=in_set), 1
        return True, 1

    def _group_reference(self) -> tuple[bool, int]:
        """After ``\\g``: a ``<name>`` reference, or a literal ``g``.

        For a literal, regex has read on to the next ``)`` or ``>`` looking for
        the name's end, and reads that text again: it is charged, so that
        ``\\g<\\g<\\g<...`` (quadratic to parse) stays within the caller's limit.
        """
        saved = self.pos
        if self.match("<"):
            name = self.get_while(NAME_END, include=False)
            if _is_group_name(name) and self.match(">"):
                return False, 3 + len(name)
        self.charge(self.pos - saved, saved)
        self.pos = saved
        return True, 1

    def _named_character(self) -> None:
        """After ``\\N``: ``{NAME}``, or nothing (a literal ``N``)."""
        saved = self.pos
        if self.match("{"):
            self.get_while(_NAMED_CHAR, keep_spaces=True)
            if self.match("}"):
                return
        self.pos = saved

    def _property(self) -> bool:
        """After ``\\p``: False for a property, True when it is a literal ``p`` after all."""
        saved = self.pos
        char = self.get()
        if char == "{":
            self.match("^")
            self._property_name()
            if self.match("}"):
                return False
        elif char and char in "CLMNPSZ":
            return False
        self.pos = saved
        return True

    def _property_name(self) -> None:
        self.get_while(_PROPERTY_NAME)
        saved = self.pos
        char = self.get()
        if char and char in ":=" and self.get_while(_PROPERTY_VALUE).strip():
            saved = self.pos
        self.pos = saved

    def _numeric_escape(self, first: str, *, in_set: bool) -> bool:
        if in_set or first == "0":  # octal, up to three digits
            digits = 1
            saved = self.pos
            char = self.get()
            while digits < 3 and char in _OCTAL:
                digits += 1
                saved = self.pos
                char = self.get()
            self.pos = saved
            return True
        saved = self.pos
        second = self.get()
        if second in DIGITS:
            saved = self.pos
            if first in _OCTAL and second in _OCTAL and self.get() in _OCTAL:
                return True  # a three-digit octal escape
        self.pos = saved
        return False  # a group reference

    # -- character sets -----------------------------------------------------

    def read_set(self) -> None:
        """After ``[``: up to the ``]`` that closes the set (``parse_set``)."""
        verbose, self.verbose = self.verbose, False  # whitespace is literal in a set
        depth = 1
        self.match("^")
        member_due = True  # the first member, and one after a set operator, may be "]"
        while True:
            if not member_due:
                if self.match("]"):
                    depth -= 1
                    if depth == 0:
                        break
                    continue
                if self.version1 and any(self.match(op) for op in _SET_OPERATORS):
                    member_due = True
                    continue
            member_due = False
            kind = self._set_item()
            if kind == "character":
                kind = self._range_end()
            if kind == "end":
                break
            if kind == "nested":
                depth += 1
                self.match("^")
                member_due = True
        self.verbose = verbose

    def _range_end(self) -> SetItem:
        """After a single-character member: ``-`` and the end of a range, if any."""
        before = self.pos
        if not self.match("-"):
            return "member"
        after = self.pos
        if self.version1 and self.match("-"):  # the "--" operator
            self.pos = before
            return "member"
        if self.match("]"):  # a trailing hyphen
            self.pos = after
            return "member"
        return self._set_item()

    def _set_item(self) -> SetItem:
        """One item: a single character, another member, the start of a nested set, or
        the end of the pattern."""
        if self.match("\\"):
            return "character" if self.read_escape(in_set=True)[0] else "member"
        saved = self.pos
        if self.match("[:"):
            if self._posix_class():
                return "member"
            self.pos = saved
        if self.version1 and self.match("["):
            return "nested"
        return "character" if self.get() else "end"

    def _posix_class(self) -> bool:
        """After ``[:``: whether ``[:name:]`` follows (``parse_posix_class``)."""
        self.match("^")
        self._property_name()
        return self.match(":]")


def _constraint(seen: set[str], char: str) -> None:
    # str containment on purpose: regex accepts "" (the end) here too
    if char not in "deis" or char in seen:
        raise _NotFuzzy
    seen.add(char)


def _is_group_name(name: str) -> bool:
    """What ``\\g<name>`` accepts: a group number from 1, or an identifier."""
    if name.isdecimal():
        return any(digit != "0" for digit in name)
    return name.isidentifier()
