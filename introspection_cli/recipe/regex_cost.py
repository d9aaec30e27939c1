"""How much the ``regex`` module builds when it compiles a pattern, found without compiling.

``regex`` compiles a repetition whose minimum count m is at least 1 into m + 1
copies of its body: ``a{1000}`` holds 1,001 ``a`` nodes and ``(?:x)+`` two
copies of ``x``. Nested repetitions multiply, so ``(?:a{10000}){10000}`` asks
for 10^8 nodes (tens of gigabytes) and ``((a)+)+`` nested 30 deep for 2^30:
``regex.compile`` does not return. A minimum of 0 (``*``, ``?``, ``{0,n}``) is
not unrolled, and neither is a maximum.

:func:`expanded_size` counts that: every element (character, escape, set,
group) counts once per copy the compiled pattern holds of it, the product of
``m + 1`` over the repetitions around it with m >= 1. It reads the pattern as
``regex`` parses it (:mod:`regex_syntax`), so a count inside a character set,
an escape or a comment is not a count, and one written with verbose-mode
spaces (``(?x)a{1 000}``) is; it follows groups of every kind, scoped and
positional inline flags (which ``regex`` lets leak out of ``(?|...)`` and
lookaround conditionals), and ``(?V1)``, which makes ``regex`` parse the whole
pattern again. A property test checks the count against the ``regex`` parser.

The scan is linear in the pattern's length and stops once the copies pass the
caller's limit.
"""

from __future__ import annotations

from introspection_cli.recipe.regex_syntax import DIGITS, NAME_END, PatternReader

_REPEAT_MINIMUM = {"?": 0, "*": 0, "+": 1}


class Expansion:
    """What compiling a pattern builds.

    ``size`` counts every element, copies included; ``copies`` only the copies
    that repetitions add (``a{1000}``: size 1,001, copies 1,000), the part that
    grows faster than the pattern's text and that the limit bounds. ``over_at``
    is the 0-based index in the pattern where ``copies`` passed the limit (None:
    it did not).
    """

    __slots__ = ("copies", "over_at", "size")

    def __init__(self, size: int, copies: int, over_at: int | None) -> None:
        self.size = size
        self.copies = copies
        self.over_at = over_at

    def __repr__(self) -> str:
        return f"Expansion(size={self.size}, copies={self.copies}, over_at={self.over_at})"


def expanded_size(pattern: str, *, verbose: bool, limit: int) -> Expansion:
    """Count what ``regex.compile(pattern)`` builds, stopping once ``copies`` passes ``limit``.

    ``verbose`` is the regex literal's ``x`` flag.
    """
    version1 = False
    while True:
        scanner = _Scanner(pattern, verbose=verbose, version1=version1, limit=limit)
        try:
            scanner.run()
        except _Restart:  # (?V1): regex parses the whole pattern again with version-1 sets
            version1 = True
            continue
        except _Rejected:  # regex stops here with a syntax error, and compiling says which
            pass
        return Expansion(scanner.size, scanner.copies, scanner.over_at)


class _Restart(Exception):
    pass


class _Rejected(Exception):
    pass


class _Group:
    """An open group: the size of its content so far, and what a quantifier would repeat."""

    __slots__ = ("last", "size", "verbose_after")

    def __init__(self, verbose_after: bool | None) -> None:
        self.verbose_after = verbose_after  # the mode restored at ")"; None: flags leak out
        self.size = 0
        self.last: int | None = None  # size of the element just before; None: nothing to repeat


class _Scanner(PatternReader):
    """One pass of ``regex``'s ``parse_sequence`` / ``parse_paren``, keeping only sizes."""

    def __init__(self, pattern: str, *, verbose: bool, version1: bool, limit: int) -> None:
        super().__init__(pattern, verbose=verbose, version1=version1)
        self.limit = limit
        self.size = 0
        self.copies = 0
        self.over_at: int | None = None
        self.groups = [_Group(verbose_after=None)]

    def run(self) -> None:
        while self.over_at is None:
            char = self.get()
            if not char:
                break
            at = self.pos - 1
            if char == ")":
                self._close()
            elif char == "|":
                self.groups[-1].last = None
            elif char == "\\":
                self._add(self.read_escape(in_set=False)[1])
            elif char == "(":
                self._paren()
            elif char == "[":
                self.read_set()
                self._add(1)
            elif char in _REPEAT_MINIMUM:
                self._repeat(_REPEAT_MINIMUM[char], at)
            elif char == "{":
                self._brace(at)
            else:
                self._add(1)
        while len(self.groups) > 1 and self.over_at is None:  # unclosed: regex rejects it
            self._close()

    # -- sizes ----------------------------------------------------------------

    def _add(self, weight: int, *, new: int | None = None) -> None:
        """An element of ``weight``; ``new`` of it was not counted yet (a group's content was)."""
        group = self.groups[-1]
        group.size += weight
        group.last = weight
        self.size += weight if new is None else new

    def charge(self, amount: int, at: int) -> None:
        self.size += amount
        self.copies += amount
        if self.copies > self.limit and self.over_at is None:
            self.over_at = at

    def _repeat(self, minimum: int, at: int) -> None:
        group = self.groups[-1]
        if group.last is not None and minimum > 0:
            extra = group.last * minimum  # minimum + 1 copies in all
            group.size += extra
            self.charge(extra, at)
        group.last = None  # a repeat cannot be repeated again ("multiple repeat")
        saved = self.pos
        if self.get() not in ("?", "+"):  # lazy or possessive suffix
            self.pos = saved

    def _brace(self, at: int) -> None:
        """After ``{``: a counted repetition, a fuzzy constraint, or a literal brace."""
        minimum = self.read_counts()
        if minimum is not None:
            self._repeat(minimum, at)
        elif not self.read_fuzzy():
            self._add(1)
        # A fuzzy constraint leaves the element before it as the one a quantifier
        # would repeat: regex does so when the constraint allows no error ({e<=0}).

    # -- groups ---------------------------------------------------------------

    def _open(self, *, leaks: bool = False) -> None:
        self.groups.append(_Group(verbose_after=None if leaks else self.verbose))

    def _close(self) -> None:
        if len(self.groups) == 1:
            return  # an unbalanced ")": regex rejects the pattern
        group = self.groups.pop()
        if group.verbose_after is not None:
            self.verbose = group.verbose_after
        self._add(group.size + 1, new=1)

    def _paren(self) -> None:
        """After ``(``: mirrors ``parse_paren``."""
        saved = self.pos
        char = self.get(raw=True)
        if char == "?":
            self._extension()
            return
        if char == "*":
            word = self.get_while(NAME_END, include=False)
            if not word[:1].isalpha():  # regex reads "(*" as a group starting with a quantifier
                raise _Rejected
            self.match(")")  # a verb such as (*FAIL)
            self._add(1)
            return
        self.pos = saved
        self._open()

    def _extension(self) -> None:
        """After ``(?``."""
        after_question = self.pos
        char = self.get(raw=True)
        if char == "<":
            saved = self.pos
            if self.get() not in ("=", "!"):  # not a lookbehind: a named group
                self.pos = saved
                self.get_while(NAME_END, include=False)
                self.match(">")
            self._open()
        elif char in ("=", "!", ">"):  # lookahead, atomic group
            self._open()
        elif char == "|":  # branch reset: regex keeps its inline flags past the ")"
            self._open(leaks=True)
        elif char == "P":
            self._python_extension()
        elif char == "#":
            self.read_comment()
        elif char == "(":
            self._conditional()
        elif char == "R" or char in DIGITS or char == "&" or (
                char in ("+", "-") and self.peek() in DIGITS):
            self.get_while(NAME_END, include=False)  # a call to a group
            self.match(")")
            self._add(1)
        else:
            self.pos = after_question
            self._flags()

    def _python_extension(self) -> None:
        """After ``(?P``: a named group, a named reference or a call."""
        char = self.get()
        if char not in ("<", "=", ">", "&"):
            return  # regex rejects it
        self.get_while(NAME_END, include=False)
        if char == "<":
            self.match(">")
            self._open()
        else:
            self.match(")")
            self._add(1)

    def _conditional(self) -> None:
        """After ``(?(``: ``(?(name)yes|no)`` or ``(?(?=...)yes|no)``."""
        saved = self.pos
        if self.get() == "?":
            char = self.get()
            if char == "<":
                char = self.get()
            if char in ("=", "!"):
                self._open(leaks=True)  # regex keeps the yes/no branches' inline flags
                self._open()  # the lookaround
            return
        self.pos = saved
        self.get_while(NAME_END, include=False)
        self.match(")")
        self._open()

    def _flags(self) -> None:
        """``(?flags)`` for the rest of the group, or ``(?flags:...)``."""
        on = self.read_flag_set()
        off = self.read_flag_set() if self.match("-") else []
        if "V1" in on and not self.version1:
            raise _Restart
        verbose = (self.verbose or "x" in on) and "x" not in off
        if self.match(":"):
            self._open()
            self.verbose = verbose
        elif self.match(")"):
            self.verbose = verbose
