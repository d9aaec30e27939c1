"""Hostile text for the pages' untrusted-text renderer, and how a test waits for a page.

A browser lays out one paragraph in time that grows faster than its length for
some scripts: a run of Thai letters (line breaking looks words up in a
dictionary) or of alternating Latin and Hebrew letters (one bidi run per
letter) took seconds at 100,000 characters and minutes at 2,000,000 before the
renderer laid long text out in pieces.
"""

from __future__ import annotations

import random
from typing import Any

THAI = "กขคงจฉชซญดตถทนบปผพฟภมยรลวศสหอฮะาิีึืุู"
#: Every bidi control the pages show as an escape, and the escape they show.
BIDI = {chr(code): f"\\u{code:04x}" for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))}

#: A frame was laid out after the predicate's condition held (a forced layout in the
#: predicate, polled on animation frames: a page stuck in layout never answers).
LAID_OUT = "(selector) => document.querySelector(selector) !== null && " \
           "document.documentElement.getBoundingClientRect().height > 0"


def thai_token(length: int, seed: int = 21) -> str:
    """``length`` Thai letters without a space: one unbroken token."""
    pick = random.Random(seed).choice
    return "".join(pick(THAI) for _ in range(length))


def mixed_direction_token(length: int) -> str:
    """Latin and Hebrew letters alternating, without a space."""
    return ("a\u05d0" * (length // 2 + 1))[:length]


def wait_laid_out(page: Any, selector: str, timeout_s: float) -> None:
    """Wait until ``selector`` is on the page and a layout of the whole page finished."""
    page.wait_for_function(LAID_OUT, arg=selector, polling=100, timeout=timeout_s * 1000)


def shown_text(page: Any, selector: str) -> str:
    """What a person reads in ``selector``: its rendered text (no hidden fold content)."""
    return str(page.locator(selector).first.inner_text())
