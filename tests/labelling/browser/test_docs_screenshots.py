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
from tests.labelling.recipes import GATED_JUDGE, row, write_recipe

CONVERSATION = [
    {"type": "message", "role": "user",
     "text": "Hi, I was charged twice for invoice INV-2291. Can I get a refund?"},
    {"type": "tool", "name": "lookup_invoice", "input": {"invoice_id": "INV-2291"},
     "output": {"amount": 49.5, "charges": 2, "status": "paid"}, "status": "ok"},
    {"type": "message", "role": "assistant",
     "text": "I see two charges of €49.50 on INV-2291. I've opened refund request RF-118 for "
             "the duplicate; you'll see it within 5–7 business days."},
    {"type": "feedback", "rating": "positive", "comment": "quick and clear"},
]


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
    context = browser.new_context(viewport={"width": 960, "height": 820})
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
        context.close()
