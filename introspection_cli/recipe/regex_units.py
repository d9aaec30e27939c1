"""What one copy of an element costs when ``regex`` compiles it, in units of about
300 bytes (one compiled node), as measured with ``regex.compile``.

:mod:`~.regex_cost` multiplies these by the copies a pattern's repetitions make.
"""

from __future__ import annotations

#: Characters whose full case folding is several characters
#: (``regex._regex.get_expand_on_folding``): under full case folding regex adds a
#: branch for each one a set may match.
EXPANDING_FOLDS = frozenset(
    "\u00df\u0130\u0149\u01f0\u0390\u03b0\u0587\u1e96\u1e97\u1e98\u1e99\u1e9a\u1e9e"
    "\u1f50\u1f52\u1f54\u1f56" + "".join(map(chr, range(0x1F80, 0x1FB0)))
    + "\u1fb2\u1fb3\u1fb4\u1fb6\u1fb7\u1fbc\u1fc2\u1fc3\u1fc4\u1fc6\u1fc7\u1fcc"
    "\u1fd2\u1fd3\u1fd6\u1fd7\u1fe2\u1fe3\u1fe4\u1fe6\u1fe7\u1ff2\u1ff3\u1ff4\u1ff6"
    "\u1ff7\u1ffc\ufb00\ufb01\ufb02\ufb03\ufb04\ufb05\ufb06\ufb13\ufb14\ufb15\ufb16"
    "\ufb17\U0001df95")

#: Cost units (about 300 bytes of compiled pattern each) of one copy of an element.
CHARACTER = 1
GROUP = 2
FOLDING_CHARACTER = 5
_FOLD_PER_CHARACTER = 1.25
#: Escapes that compile to more than one node: a grapheme (about 1.2 KB) and a line break.
COSTLY_ESCAPES = {"X": 5, "R": 6}
#: The most a set costs under full case folding: it may hold every expanding character.
_FOLDING_SET_MAX = int(_FOLD_PER_CHARACTER * len(EXPANDING_FOLDS) + 1)


def set_cost(body: str) -> int:
    """Cost units of one copy of a set whose text between ``[`` and ``]`` is ``body``.

    regex compiles a member per range, class or property (about 100 bytes each,
    a property more) and keeps single characters in one list: 1, plus 1 for
    every two members (counted from ``-``, ``\\`` and ``[:``, which
    over-counts), plus 1 for every 32 characters.
    """
    members = body.count("-") + body.count("\\") + body.count("[:")
    return 1 + members // 2 + len(body) // 32


def set_folding(body: str) -> int:
    """Cost units full case folding adds to one copy of a set whose text is ``body``:
    1.25 for each character with a multi-character folding it may match, rounded up,
    or the most any set can add when its text does not show which it holds."""
    expanding = _expanding_members(body)
    return (_FOLDING_SET_MAX if expanding is None
            else int(_FOLD_PER_CHARACTER * expanding + 0.999))


def _expanding_members(body: str) -> int | None:
    """How many characters with a multi-character folding a set's text may match.

    ``body`` is the text between ``[`` and ``]``. None when it holds more than
    single characters and ranges (an escape, a nested set, a negation), which
    may match any of them; a lone escape or POSIX class (``[\\w]``) matches as
    the class does, without folding branches, and counts 0.
    """
    if body.startswith("^"):
        return None
    if "\\" in body or "[" in body:
        if len(body) == 2 and body[0] == "\\" and body[1] in "dDsSwWhH":
            return 0
        return None
    count = 0
    index = 0
    while index < len(body):
        low = body[index]
        if index + 2 < len(body) and body[index + 1] == "-":
            high = body[index + 2]
            count += sum(1 for char in EXPANDING_FOLDS if low <= char <= high)
            index += 3
        else:
            count += low in EXPANDING_FOLDS
            index += 1
    return min(count, len(EXPANDING_FOLDS))
