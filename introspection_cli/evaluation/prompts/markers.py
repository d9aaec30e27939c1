"""Neutralising fence markers inside untrusted material.

The conversation is fenced between ``[BEGIN EVALUATED MATERIAL: conversation]``
and ``[END EVALUATED MATERIAL]``. Text inside it that a model could read as
one of those markers must not stay one: not in another case or spacing, with a
full-width bracket or letters, with zero-width characters between the letters,
or with Cyrillic or Greek letters that look like Latin ones. A marker is read on
the *folded* text (look-alikes mapped to Latin, NFKD, combining marks and
invisible characters dropped, case folded, character by character), and the
opening bracket of each is rewritten in the original text, so nothing else in
the material changes.

Speed: ASCII text is read by one regex that skips the invisible ASCII control
characters. Other text is folded only from each bracket that may start a marker
(not, say, the ``[1]`` numbering each event), one character at a time, until the
marker is either read or impossible. That stops at the next bracket at the latest
(a bracket is neither a letter of the marker nor space), so each character is
folded at most once, and a text with one non-ASCII character costs about what an
ASCII one does.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterator

from introspection_cli.evaluation.prompts.fence import BEGIN_MARKER as BEGIN_MARKER
from introspection_cli.evaluation.prompts.fence import END_MARKER as END_MARKER

_NEUTRALISED = "[neutralised marker: "
# ASCII folds to itself lower-cased, except control characters that are not space:
# those are invisible, so they are skipped wherever they stand.
_HIDDEN = r"[\x00-\x08\x0e-\x1b\x7f]*"
_GAP = r"[\s\x00-\x1f\x7f]*"
_ASCII_MARKER = re.compile(
    r"\[" + _GAP + "(?:" + _HIDDEN.join("begin") + "|" + _HIDDEN.join("end") + ")" + _GAP
    + _HIDDEN.join("evaluated") + _GAP + _HIDDEN.join("material"), re.IGNORECASE | re.ASCII)
# Brackets a reader takes for "[", and every character whose folding holds a "["
# (tests/evaluation/test_markers.py checks the second half against all of Unicode).
_BRACKETS = frozenset("[［【〔⟦⁅〚\ufe47")
_OTHER_BRACKETS = tuple(sorted(_BRACKETS - {"["}))
_OTHER_BRACKET = re.compile("[" + "".join(_OTHER_BRACKETS) + "]")
# A "[" followed by space, by a character that is not printable ASCII (it may fold to
# a space, to nothing or to a letter), or by the first letter of "begin" or "end".
# Printable ASCII folds to itself, so anything else rules a marker out: this skips
# the "[1]" numbering of every event without folding anything.
_MAY_OPEN = re.compile(r"\[(?:(?![\x21-\x7e])|(?=[bBeE]))")
# Letters that look like the Latin letters of the markers (BEGIN EVALUATED MATERIAL).
_CONFUSABLES = str.maketrans({
    "А": "A", "В": "B", "Е": "E", "І": "I", "М": "M", "Т": "T", "Ԁ": "D", "Ꭺ": "A",
    "а": "a", "е": "e", "і": "i", "ԁ": "d", "ɡ": "g", "ո": "n", "ս": "u", "ѵ": "v",
    "Α": "A", "Β": "B", "Ε": "E", "Ι": "I", "Μ": "M", "Ν": "N", "Τ": "T",
    "α": "a", "ι": "i", "ν": "v", "ɑ": "a", "ı": "i", "ℓ": "l", "Ӏ": "l", "ӏ": "l",
})
#: The words after the bracket, in order; space may come before each, never inside one.
_WORDS = (("begin", "end"), ("evaluated",), ("material",))


def neutralise_markers(text: str) -> str:
    """Rewrite anything that reads as a fence marker so it no longer is one.

    Idempotent; text without anything marker-like is returned unchanged.
    """
    if text.isascii():
        starts = [match.start() for match in _ASCII_MARKER.finditer(text)]
    else:
        starts = [start for start in _candidates(text) if _reads_as_marker(text, start + 1)]
    if not starts:
        return text
    pieces: list[str] = []
    last = 0
    for start in starts:
        pieces.extend((text[last:start], _NEUTRALISED))
        last = start + 1  # the original bracket is replaced
    pieces.append(text[last:])
    return "".join(pieces)


def _candidates(text: str) -> list[int]:
    """Where a marker may start: each "[" that :data:`_MAY_OPEN`, and every other bracket."""
    found = [match.start() for match in _MAY_OPEN.finditer(text)]
    if any(bracket in text for bracket in _OTHER_BRACKETS):  # rare: scan for them too
        found = sorted(found + [match.start() for match in _OTHER_BRACKET.finditer(text)])
    return found


def _reads_as_marker(text: str, index: int) -> bool:
    """Whether the folded text from ``index`` on reads ``begin|end evaluated material``,
    with space allowed before each word and nowhere else."""
    word_index, word, position = 0, "", 0
    for char in _folded_from(text, index):
        if position == 0:  # between words: skip space, or start the next word
            if char.isspace():
                continue
            word = next((w for w in _WORDS[word_index] if w[0] == char), "")
            if not word:
                return False
        elif char != word[position]:
            return False
        position += 1
        if position == len(word):
            word_index, position = word_index + 1, 0
            if word_index == len(_WORDS):
                return True
    return False


def _folded_from(text: str, index: int) -> Iterator[str]:
    """The folded characters of ``text[index:]``, folded only as far as they are read."""
    for position in range(index, len(text)):
        yield from _fold_char(text[position])


@functools.lru_cache(maxsize=4096)
def _fold_char(char: str) -> str:
    """One character as the marker reader sees it (``""`` when it is invisible)."""
    if char in _BRACKETS:
        return "["
    parts: list[str] = []
    for part in unicodedata.normalize("NFKD", char.translate(_CONFUSABLES)):
        category = unicodedata.category(part)
        if category in ("Mn", "Me", "Cf") or (category == "Cc" and not part.isspace()):
            continue  # combining marks, zero-width and other invisible characters
        parts.append(part.casefold())
    return "".join(parts)
