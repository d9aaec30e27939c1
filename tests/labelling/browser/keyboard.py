"""Labelling a queue by keyboard in the real browser: shared by the test and the bench."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

#: The status line once line N's write is confirmed by the server.
SAVED = "(n) => document.getElementById('status').textContent.startsWith('Saved line ' + n + ':')"


def open_app(page: Any, url: str) -> None:
    """Load the page from the printed address and wait until its first row is shown."""
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]")


def label_by_keyboard(page: Any, url: str, keys: Sequence[tuple[int, str]]) -> float:
    """Open the app, press each key on its line, wait for each save; seconds in all.

    Timed from the first page load to the last save confirmed on the page, one
    key after the other as a person works (the next key once the save shows).
    """
    started = time.perf_counter()
    open_app(page, url)
    for line, key in keys:
        page.keyboard.press(key)
        page.wait_for_function(SAVED, arg=line)
    return time.perf_counter() - started
