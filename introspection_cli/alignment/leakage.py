"""Refusing a candidate rubric that quotes a conversation it must not have seen.

The optimizer is shown train rows only, so a rubric quoting any other row's
conversation has leaked an example into the judge: its dev and test figures
would then measure memory, not judgement. A candidate is refused when any
:data:`QUOTE_SPAN` consecutive characters of it, after :func:`normalise`,
occur in the normalised text of a row that is not in ``train`` (``dev``,
``test``, and rows with no split yet, which a later ``judges split`` may put
in ``test``). A row's text is every string inside its ``judge_input`` (message
texts, tool inputs and outputs, feedback, any other event's strings), each
string on its own. Train rows may be quoted: the optimizer was shown them, and
a quote of train text fits train, which no figure is taken from.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

#: The shortest run of characters that counts as a quote.
QUOTE_SPAN = 40
_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """``text`` as quotes are compared: NFKC, case-folded, every run of whitespace
    (line breaks included) one space, no space at either end."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def strings_in(value: object) -> Iterator[str]:
    """Every string inside a JSON value (object keys left out), depth first."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))


@dataclass(frozen=True, slots=True)
class GuardedRow:
    """A row a candidate must not quote: where it is and its normalised texts."""

    line: int
    conversation_id: str
    split: str | None
    texts: tuple[str, ...]


def guarded_row(line: int, conversation_id: str, split: str | None,
                judge_input: object) -> GuardedRow:
    """The row's texts long enough to hold a quote, normalised."""
    texts = (normalise(text) for text in strings_in(judge_input))
    return GuardedRow(line, conversation_id, split,
                      tuple(text for text in texts if len(text) >= QUOTE_SPAN))


@dataclass(frozen=True, slots=True)
class Quote:
    """A span of the candidate found in a guarded row."""

    line: int
    conversation_id: str
    split: str | None
    span: str

    @property
    def message(self) -> str:
        where = self.split or "no split"
        return (f"the candidate quotes the conversation {self.conversation_id} (line "
                f"{self.line}, {where}): {self.span!r}; a rubric must not contain text from "
                "rows outside train")


def find_quote(candidate: str, rows: Iterable[GuardedRow]) -> Quote | None:
    """The first guarded row holding :data:`QUOTE_SPAN` normalised characters of
    ``candidate``, with the span; None when it quotes none."""
    text = normalise(candidate)
    windows = {text[i:i + QUOTE_SPAN] for i in range(len(text) - QUOTE_SPAN + 1)}
    if not windows:
        return None
    for row in rows:
        for guarded in row.texts:
            span = _shared_window(guarded, windows)
            if span is not None:
                return Quote(row.line, row.conversation_id, row.split, span)
    return None


def _shared_window(text: str, windows: set[str]) -> str | None:
    for start in range(len(text) - QUOTE_SPAN + 1):
        window = text[start:start + QUOTE_SPAN]
        if window in windows:
            return window
    return None


def guarded_rows_of(rows: Sequence[tuple[int, str, str | None, object]]) -> list[GuardedRow]:
    """:func:`guarded_row` for each (line, conversation id, split, judge_input) not in train."""
    return [guarded_row(*row) for row in rows if row[2] != "train"]
