"""The screenshots in docs/labelling.md, taken from the real app.

Every run saves them as test artifacts. To refresh the committed ones:

    INTROSPECTION_DOCS_IMAGES=docs/images python -m pytest tests/labelling/browser/test_docs_screenshots.py
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from tests.labelling.browser.harness import LabelApp
from tests.labelling.browser.keyboard import SAVED, open_app
from tests.labelling.browser.test_app_browser import _report_for
from tests.labelling.recipes import (
    GATED_JUDGE,
    REFUND_CONVERSATION,
    UNGATED_JUDGE,
    row,
    write_recipe,
)

CONVERSATION = REFUND_CONVERSATION


def _save(page: Any, name: str, artifacts: Path) -> None:
    target = artifacts / name
    page.screenshot(path=str(target))
    docs = os.environ.get("INTROSPECTION_DOCS_IMAGES")
    if docs:
        Path(docs).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(target, Path(docs) / name)


def test_docs_screenshots(tmp_path: Path, browser: Any, artifacts: Path) -> None:
    rows = [row("conv_01JD8ZQ4R5", events=CONVERSATION),
            row("conv_01JD8ZQ9K2", "Can you change my delivery address?"),
            *[row(f"conv_01JD9{n:05d}", f"Refund for order {n}?") for n in range(10)]]
    rows[0]["expected"] = None
    recipe = write_recipe(tmp_path / "r", {"billing": (GATED_JUDGE, rows)})
    # A laptop screen: the rubric beside the conversation, the whole of it in view.
    context = browser.new_context(viewport={"width": 1280, "height": 850})
    page = context.new_page()
    app = LabelApp.start(recipe)
    try:
        open_app(page, app.url)
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowLeft")
        page.keyboard.press("p")
        page.wait_for_function(SAVED, arg=1)
        page.keyboard.press("ArrowLeft")
        page.wait_for_function("() => document.getElementById('row-head').textContent"
                               ".includes('Line 1')")
        _save(page, "labelling-app.png", artifacts)
    finally:
        app.kill()
    reviewed = write_recipe(tmp_path / "review", {"billing": (GATED_JUDGE, [
        row("conv_01JD8ZQ4R5", events=CONVERSATION, expected="pass")])})
    report = _report_for(reviewed, {"conv_01JD8ZQ4R5": (
        "fail", "The agent opened a refund but never confirmed the amount with the customer, "
                "which the rubric requires before promising a timeline.")}, stale=set())
    app = LabelApp.start(reviewed, "--review", str(report))
    try:
        open_app(page, app.url)
        _save(page, "labelling-review.png", artifacts)
    finally:
        app.kill()
    both = write_recipe(tmp_path / "both", {
        "billing": (GATED_JUDGE, [row("conv_01JD8ZQ4R5", events=CONVERSATION), *rows[1:4]]),
        "helpful": (UNGATED_JUDGE, [row("conv_01JD8ZQ4R5", events=CONVERSATION), rows[1]])})
    app = LabelApp.start(both, "--judge", "billing", "--judge", "helpful")
    try:
        open_app(page, app.url)
        page.keyboard.press("p")  # billing's label; the focus goes on to helpful
        page.wait_for_function("() => document.getElementById('status').textContent"
                               ".startsWith('Saved line 1 of billing')")
        _save(page, "labelling-judges.png", artifacts)
    finally:
        app.kill()
        context.close()
