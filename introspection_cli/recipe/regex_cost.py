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

It also estimates what compiling costs (:attr:`Expansion.cost`, in units of
about 300 bytes, the size of one compiled node): every element counts once per
copy, weighted by kind as measured with ``regex.compile`` (docs/rules.md,
"Regex size limits"): 1 for a character, ``.``, a shorthand class or a
property, 5 for ``\\X`` and 6 for ``\\R``, 2 for a group; a set 1 plus 1
for every two ranges or classes in it (:mod:`~.regex_units`). Under full
case folding (``f`` with ``i``, or ``V1`` with ``i``) regex adds a branch for
every character that folds to several (``ß``, ``ﬃ``: 105 of them) that a set
may match: a character that does costs 5, and a set 1.25 more per such
character, up to 133 when its text does not show which it holds
(``(?fi)[ß-ﬃ]`` alone is 35 KB). Text regex parses again (``\\g<`` without
its ``>``) costs 1 a character. Case flags are taken to hold for the whole
pattern once seen anywhere, which can only over-estimate.

The scan is linear in the pattern's length and stops once the cost passes the
caller's limit.
"""

from __future__ import annotations

from introspection_cli.recipe.regex_cursor import DIGITS, NAME_END
from introspection_cli.recipe.regex_syntax import PatternReader
from introspection_cli.recipe.regex_units import (
    CHARACTER,
    COSTLY_ESCAPES,
    EXPANDING_FOLDS,
    FOLDING_CHARACTER,
    GROUP,
    set_cost,
    set_folding,
)

_REPEAT_MINIMUM = {"?": 0, "*": 0, "+": 1}


class Expansion:
    """What compiling a pattern builds.

    ``size`` counts every element, copies included; ``copies`` only the copies
    that repetitions add (``a{1000}``: size 1,001, copies 1,000). ``cost`` is
    the weighted estimate the limit bounds (module docstring), of which
    ``repeated`` comes from the copies, ``folding`` from full case folding and
    ``reread`` from text regex parses again. ``over_at`` is the 0-based index in
    the pattern where ``cost`` passed the limit (None: it did not).
    """

    __slots__ = ("copies", "cost", "folding", "over_at", "repeated", "reread", "size")

    def __init__(self, scanner: _Scanner) -> None:
        self.size = scanner.size
        self.copies = scanner.copies
        self.cost = scanner.cost
        self.repeated = scanner.repeated
        self.folding = scanner.folding
        self.reread = scanner.reread
        self.over_at = scanner.over_at

    def cause(self) -> str:
        """What makes the cost large: "reread", "folding", "repeats" or "elements"."""
        if self.reread * 2 >= self.cost:
            return "reread"
        if self.folding * 2 >= self.cost:
            return "folding"
        if self.repeated * 2 >= self.cost:
            return "repeats"
        return "elements"

    def __repr__(self) -> str:
        return (f"Expansion(size={self.size}, copies={self.copies}, cost={self.cost}, "
                f"over_at={self.over_at})")


def expanded_size(pattern: str, *, verbose: bool, limit: int,
                  ignorecase: bool = False) -> Expansion:
    """Count what ``regex.compile(pattern)`` builds, stopping once ``cost`` passes ``limit``.

    ``verbose`` and ``ignorecase`` are the regex literal's ``x`` and ``i`` flags.
    """
    version1 = False
    caseless = ignorecase
    fullcase = False
    while True:
        scanner = _Scanner(pattern, verbose=verbose, version1=version1, limit=limit,
                           caseless=caseless, fullcase=fullcase)
        try:
            scanner.run()
        except _Restart as restart:  # (?V1) or a case flag: scan the whole pattern again
            version1 = version1 or restart.version1
            caseless = caseless or restart.caseless
            fullcase = fullcase or restart.fullcase
            continue
        except _Rejected:  # regex stops here with a syntax error, and compiling says which
            pass
        return Expansion(scanner)


class _Restart(Exception):
    def __init__(self, *, version1: bool, caseless: bool, fullcase: bool) -> None:
        super().__init__()
        self.version1 = version1
        self.caseless = caseless
        self.fullcase = fullcase


class _Rejected(Exception):
    pass


class _Group:
    """An open group: its content's size and cost so far, and what a quantifier would repeat."""

    __slots__ = ("cost", "folding", "last", "last_cost", "last_folding", "size", "verbose_after")

    def __init__(self, verbose_after: bool | None) -> None:
        self.verbose_after = verbose_after  # the mode restored at ")"; None: flags leak out
        self.size = 0
        self.cost = 0
        self.folding = 0
        self.last: int | None = None  # size of the element just before; None: nothing to repeat
        self.last_cost = 0
        self.last_folding = 0


class _Scanner(PatternReader):
    """One pass of ``regex``'s ``parse_sequence`` / ``parse_paren``, keeping only sizes."""

    def __init__(self, pattern: str, *, verbose: bool, version1: bool, limit: int,
                 caseless: bool, fullcase: bool) -> None:
        super().__init__(pattern, verbose=verbose, version1=version1)
        self.limit = limit
        self.caseless = caseless  # assumed for the whole pattern once seen anywhere
        self.fullcase = fullcase  # the f flag seen anywhere
        self.size = 0
        self.copies = 0
        self.cost = 0
        self.repeated = 0
        self.folding = 0
        self.reread = 0
        self.over_at: int | None = None
        self.groups = [_Group(verbose_after=None)]

    @property
    def folds(self) -> bool:
        """Full case folding: regex turns it on with f, and in version 1, with i."""
        return self.caseless and (self.fullcase or self.version1)

    def run(self) -> None:
        while self.over_at is None:
            char = self.get()
            if not char:
                break
            at = self.pos - 1
            if char == ")":
                self._close(at)
            elif char == "|":
                self.groups[-1].last = None
            elif char == "\\":
                single, size = self.read_escape(in_set=False)
                folding = FOLDING_CHARACTER - CHARACTER if single and self.folds else 0
                cost = COSTLY_ESCAPES.get(self.text[at + 1:at + 2], size)
                self._add(size, cost + folding, folding, at)
            elif char == "(":
                self._paren(at)
            elif char == "[":
                start = self.pos
                self.read_set()
                self._set_cost(start, at)
            elif char in _REPEAT_MINIMUM:
                self._repeat(_REPEAT_MINIMUM[char], at)
            elif char == "{":
                self._brace(at)
            else:
                folding = FOLDING_CHARACTER - CHARACTER if (
                    self.folds and char in EXPANDING_FOLDS) else 0
                self._add(1, CHARACTER + folding, folding, at)
        while len(self.groups) > 1 and self.over_at is None:  # unclosed: regex rejects it
            self._close(self.end)

    # -- sizes ----------------------------------------------------------------

    def _set_cost(self, start: int, at: int) -> None:
        """A character set that began at ``start`` (after its ``[``) and ended here."""
        body = self.text[start:self.pos - 1]
        folding = set_folding(body) if self.folds else 0
        self._add(1, set_cost(body) + folding, folding, at)

    def _add(self, size: int, cost: int, folding: int, at: int, *,
             new: tuple[int, int, int] | None = None) -> None:
        """An element; ``new`` is the part of it not counted yet (a group's content was)."""
        group = self.groups[-1]
        group.size += size
        group.cost += cost
        group.folding += folding
        group.last, group.last_cost, group.last_folding = size, cost, folding
        new_size, new_cost, new_folding = (size, cost, folding) if new is None else new
        self.size += new_size
        self.folding += new_folding
        self._spend(new_cost, at)

    def _spend(self, cost: int, at: int) -> None:
        self.cost += cost
        if self.cost > self.limit and self.over_at is None:
            self.over_at = at

    def charge(self, amount: int, at: int) -> None:
        """Text regex reads again (:meth:`PatternReader.charge`)."""
        self.reread += amount
        self._spend(amount, at)

    def _repeat(self, minimum: int, at: int) -> None:
        group = self.groups[-1]
        if group.last is not None and minimum > 0:
            extra = group.last * minimum  # minimum + 1 copies in all
            extra_cost = group.last_cost * minimum
            extra_folding = group.last_folding * minimum
            group.size += extra
            group.cost += extra_cost
            group.folding += extra_folding
            self.size += extra
            self.copies += extra
            self.repeated += extra_cost
            self.folding += extra_folding
            self._spend(extra_cost, at)
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
            self._add(1, CHARACTER, 0, at)
        # A fuzzy constraint leaves the element before it as the one a quantifier
        # would repeat: regex does so when the constraint allows no error ({e<=0}).

    # -- groups ---------------------------------------------------------------

    def _open(self, *, leaks: bool = False) -> None:
        self.groups.append(_Group(verbose_after=None if leaks else self.verbose))

    def _close(self, at: int) -> None:
        if len(self.groups) == 1:
            return  # an unbalanced ")": regex rejects the pattern
        group = self.groups.pop()
        if group.verbose_after is not None:
            self.verbose = group.verbose_after
        self._add(group.size + 1, group.cost + GROUP, group.folding, at, new=(1, GROUP, 0))

    def _paren(self, at: int) -> None:
        """After ``(``: mirrors ``parse_paren``."""
        saved = self.pos
        char = self.get(raw=True)
        if char == "?":
            self._extension(at)
            return
        if char == "*":
            word = self.get_while(NAME_END, include=False)
            if not word[:1].isalpha():  # regex reads "(*" as a group starting with a quantifier
                raise _Rejected
            self.match(")")  # a verb such as (*FAIL)
            self._add(1, GROUP, 0, at)
            return
        self.pos = saved
        self._open()

    def _extension(self, at: int) -> None:
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
            self._python_extension(at)
        elif char == "#":
            self.read_comment()
        elif char == "(":
            self._conditional()
        elif char == "R" or char in DIGITS or char == "&" or (
                char in ("+", "-") and self.peek() in DIGITS):
            self.get_while(NAME_END, include=False)  # a call to a group
            self.match(")")
            self._add(1, GROUP, 0, at)
        else:
            self.pos = after_question
            self._flags()

    def _python_extension(self, at: int) -> None:
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
            self._add(1, GROUP, 0, at)

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
        version1 = "V1" in on and not self.version1
        caseless = "i" in on and not self.caseless
        fullcase = "f" in on and not self.fullcase
        if version1 or caseless or fullcase:  # assumed for the whole pattern: scan it again
            raise _Restart(version1=version1, caseless=caseless, fullcase=fullcase)
        verbose = (self.verbose or "x" in on) and "x" not in off
        if self.match(":"):
            self._open()
            self.verbose = verbose
        elif self.match(")"):
            self.verbose = verbose
