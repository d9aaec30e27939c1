"""Neutralising fence markers inside untrusted material.

The conversation is fenced between ``[BEGIN EVALUATED MATERIAL: conversation]``
and ``[END EVALUATED MATERIAL]``. Text inside it that a model could read as
one of those markers must not stay one: not in another case or spacing, with a
full-width bracket or letters, with zero-width characters between the letters,
or with Cyrillic or Greek letters that look like Latin ones. We find markers on
a folded copy of the text (look-alikes mapped to Latin, NFKD, combining marks and
invisible characters dropped, case folded) and rewrite the opening bracket of
each in the original text, so nothing else in the material changes.
"""

from __future__ import annotations

import re
import unicodedata

#: The fence around the conversation in the user message (part of the judge fingerprint's
#: harness, with the templates: see :mod:`introspection_cli.evaluation.fingerprint`).
BEGIN_MARKER = "[BEGIN EVALUATED MATERIAL: conversation]"
END_MARKER = "[END EVALUATED MATERIAL]"

_MARKER = re.compile(r"\[\s*(?:begin|end)\s*evaluated\s*material")
_NEUTRALISED = "[neutralised marker: "
# Plain text that cannot hide a look-alike: printable ASCII and ordinary whitespace.
_PLAIN = re.compile(r"[\x20-\x7e\t\n\r]*")
_BRACKETS = frozenset("[［【〔⟦⁅〚")
# Letters that look like the Latin letters of the markers (BEGIN EVALUATED MATERIAL).
_CONFUSABLES = str.maketrans({
    "А": "A", "В": "B", "Е": "E", "І": "I", "М": "M", "Т": "T", "Ԁ": "D", "Ꭺ": "A",
    "а": "a", "е": "e", "і": "i", "ԁ": "d", "ɡ": "g", "ո": "n", "ս": "u", "ѵ": "v",
    "Α": "A", "Β": "B", "Ε": "E", "Ι": "I", "Μ": "M", "Ν": "N", "Τ": "T",
    "α": "a", "ι": "i", "ν": "v", "ɑ": "a", "ı": "i", "ℓ": "l", "Ӏ": "l", "ӏ": "l",
})


def neutralise_markers(text: str) -> str:
    """Rewrite anything that reads as a fence marker so it no longer is one.

    Idempotent; text without anything marker-like is returned unchanged.
    """
    if _PLAIN.fullmatch(text):  # the common case: no look-alike can hide in it
        folded, origin = text.lower(), None
    else:
        folded, origin = _fold(text)
    pieces: list[str] = []
    last = 0
    for match in _MARKER.finditer(folded):
        start = match.start() if origin is None else origin[match.start()]
        pieces.extend((text[last:start], _NEUTRALISED))
        last = start + 1  # the original bracket is replaced
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


def _fold(text: str) -> tuple[str, list[int]]:
    """The folded text, and for each folded character the index of its original."""
    chars: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        if char in _BRACKETS:
            chars.append("[")
            origin.append(index)
            continue
        for part in unicodedata.normalize("NFKD", char.translate(_CONFUSABLES)):
            category = unicodedata.category(part)
            if category in ("Mn", "Me", "Cf") or (category == "Cc" and not part.isspace()):
                continue  # combining marks, zero-width and other invisible characters
            for folded in part.casefold():
                chars.append(folded)
                origin.append(index)
    return "".join(chars), origin
