"""The page's layout in the real browser: the rubric beside the conversation from 1100 px
on (foldable, the fold kept across rows), a block to unfold below; tool calls as one
line each, expandable; a five-event refund conversation without scrolling at 850 px high.

Screenshots at 1280 and 850 px wide are saved as artifacts (layout-*.png).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.labelling.browser.harness import LabelApp
from tests.labelling.browser.keyboard import open_app
from tests.labelling.recipes import GATED_JUDGE, REFUND_CONVERSATION, row, write_recipe

SHOWS_ITEM = "(key) => location.hash === '#item=' + key"


@pytest.fixture
def app(tmp_path: Path) -> Iterator[LabelApp]:
    rows = [row("conv_refund", events=REFUND_CONVERSATION), row("conv_2", "Refund order 2?"),
            row("conv_3", "What time is it?")]
    started = LabelApp.start(write_recipe(tmp_path / "r", {"billing": (GATED_JUDGE, rows)}))
    yield started
    started.kill()


def _page(browser: Any, width: int, height: int = 850) -> Any:
    return browser.new_context(viewport={"width": width, "height": height}).new_page()


def _fits(page: Any) -> None:
    """Nothing to scroll: the whole page, the conversation's last event included."""
    height = page.evaluate("window.innerHeight")
    assert page.evaluate("document.documentElement.scrollHeight") <= height
    assert page.evaluate("document.documentElement.scrollWidth") <= page.evaluate(
        "window.innerWidth")
    last = page.locator(".ix-event").last.bounding_box()
    assert last is not None and last["y"] + last["height"] <= height


def _box(page: Any, selector: str) -> dict[str, float]:
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    return dict(box)


def test_from_1100_px_the_rubric_is_a_side_panel_that_folds(app: LabelApp, browser: Any,
                                                            artifacts: Path) -> None:
    page = _page(browser, 1280)
    open_app(page, app.url)
    toggle = page.locator("#rubric-toggle")
    panel = _box(page, "#rubric")
    assert panel["height"] == 850 and panel["x"] + panel["width"] == 1280
    assert 300 <= panel["width"] <= 420
    assert toggle.get_attribute("aria-expanded") == "true"
    assert page.locator("#rubric-instructions").is_visible()
    assert "Return pass when the agent handles the billing request" in \
        page.locator("#rubric").inner_text()
    main = _box(page, "#main")
    assert main["x"] + main["width"] <= panel["x"]  # beside the conversation, never over it
    assert page.locator(".ix-event").count() == 5
    _fits(page)
    page.screenshot(path=str(artifacts / "layout-1280.png"))
    page.keyboard.press("i")
    assert toggle.get_attribute("aria-expanded") == "false"
    assert page.locator("#rubric-body").is_hidden()
    assert _box(page, "#rubric")["width"] < 50
    assert _box(page, "#main")["width"] > main["width"]  # the conversation gets the room
    page.screenshot(path=str(artifacts / "layout-1280-folded.png"))
    page.keyboard.press("ArrowRight")
    page.wait_for_function(SHOWS_ITEM, arg=2)
    assert toggle.get_attribute("aria-expanded") == "false"  # folded on the next row too
    toggle.focus()
    page.keyboard.press("Enter")  # a button: the keyboard unfolds it
    assert toggle.get_attribute("aria-expanded") == "true"
    assert page.locator("#rubric-instructions").is_visible()
    page.context.close()


def test_below_1100_px_the_rubric_is_a_block_to_unfold(app: LabelApp, browser: Any,
                                                       artifacts: Path) -> None:
    page = _page(browser, 850)
    open_app(page, app.url)
    toggle = page.locator("#rubric-toggle")
    assert page.locator("#rubric").evaluate("(node) => getComputedStyle(node).position") \
        == "static"
    assert toggle.get_attribute("aria-expanded") == "false"
    assert toggle.inner_text() == "i Judge billing: Handles billing requests (show instructions)"
    assert page.locator("#rubric-body").is_hidden()
    rubric, transcript = _box(page, "#rubric"), _box(page, "#transcript")
    assert rubric["y"] + rubric["height"] <= transcript["y"]  # above the conversation
    _fits(page)
    page.screenshot(path=str(artifacts / "layout-850.png"))
    toggle.click()
    assert toggle.get_attribute("aria-expanded") == "true"
    assert "(hide instructions)" in toggle.inner_text()
    assert page.locator("#rubric-instructions").is_visible()
    page.keyboard.press("ArrowRight")
    page.wait_for_function(SHOWS_ITEM, arg=2)
    assert page.locator("#rubric-instructions").is_visible()  # kept open across rows
    page.set_viewport_size({"width": 1200, "height": 850})  # wider: the side panel
    page.wait_for_function("() => document.body.classList.contains('rubric-wide')")
    assert _box(page, "#rubric")["height"] == 850
    page.set_viewport_size({"width": 850, "height": 850})
    page.wait_for_function("() => !document.body.classList.contains('rubric-wide')")
    assert page.locator("#rubric-instructions").is_visible()
    page.context.close()


def test_tool_calls_are_one_line_each_and_expand(app: LabelApp, browser: Any,
                                                 artifacts: Path) -> None:
    page = _page(browser, 1280)
    open_app(page, app.url)
    lines = page.locator(".ix-tool-line")
    assert lines.count() == 2
    assert lines.first.text_content().startswith(
        'lookup_invoice(invoice_id="INV-2291") \u2192 ok {"amount":49.5,"charges":2,')
    assert lines.nth(1).text_content().startswith(
        'issue_refund(invoice_id="INV-2291", amount=49.5, reason="duplicate charge") \u2192 ok')
    for index in range(2):
        assert _box(page, f".ix-tool >> nth={index}")["height"] < 45  # one line, not a block
    assert page.locator(".ix-tool-full").first.is_hidden()
    lines.first.focus()  # a focusable button: Tab reaches it, Enter opens it
    page.keyboard.press("Enter")
    assert lines.first.get_attribute("aria-expanded") == "true"
    assert '"customer": "cus_8812"' in page.locator(".ix-tool-full").first.inner_text()
    assert lines.nth(1).get_attribute("aria-expanded") == "false"
    page.locator("body").click(position={"x": 5, "y": 845})  # the keys act on the page again
    page.keyboard.press("t")  # every tool call, and on every row after this one
    assert page.locator("#tools-toggle").get_attribute("aria-pressed") == "true"
    assert page.locator(".ix-tool-line[aria-expanded=false]").count() == 0
    page.screenshot(path=str(artifacts / "layout-1280-tools-open.png"), full_page=True)
    page.keyboard.press("ArrowRight")
    page.wait_for_function(SHOWS_ITEM, arg=2)
    assert page.locator(".ix-tool-line").count() == 1
    assert page.locator(".ix-tool-line[aria-expanded=true]").count() == 1
    assert page.locator(".ix-tool-full").is_visible()
    page.keyboard.press("t")
    assert page.locator(".ix-tool-full").is_hidden()
    page.context.close()
