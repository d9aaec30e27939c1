"""The transcript renderer's compact tool calls (``compactTools``): one line, expandable.

Each tool call is one button showing name(input) -> status output, each part
cut short with an ellipsis; pressing it (a click, Enter or Space) shows the
input and output as indented JSON and says so in ``aria-expanded``. Without
the option (the HTML report) a tool call is drawn as before.
"""

from __future__ import annotations

from typing import Any

import pytest

from introspection_cli import webui

REFUND = {"type": "tool", "name": "lookup_invoice", "status": "ok",
          "input": {"invoice_id": "INV-2291"},
          "output": {"amount": 49.5, "charges": 2, "status": "paid",
                     "history": [{"at": f"2026-11-{d:02d}", "event": "charge"} for d in range(9)]}}


@pytest.fixture
def drawn(page: Any) -> Any:
    page.set_content(f"<style>{webui.asset_text(webui.TRANSCRIPT_CSS)}</style><div id=t></div>"
                     f"<script>{webui.asset_text(webui.TRANSCRIPT_JS)}</script>")

    def draw(events: list[dict[str, Any]], **options: Any) -> Any:
        page.evaluate("([events, options]) => document.getElementById('t').replaceChildren("
                      "IntrospectionTranscript.render(events, options))", [events, options])
        return page.locator("#t")

    return draw


def test_a_tool_call_is_one_line_that_expands_to_its_json(page: Any, drawn: Any) -> None:
    out = drawn([REFUND], compactTools=True)
    line = out.locator("button.ix-tool-line")
    assert line.text_content().startswith(
        'lookup_invoice(invoice_id="INV-2291") \u2192 ok {"amount":49.5,"charges":2,')
    assert out.locator(".ix-tool-name").inner_text() == "lookup_invoice"
    assert out.locator(".ix-tool-args").inner_text() == '(invoice_id="INV-2291")'
    assert out.locator(".ix-status").inner_text() == "ok"
    output = out.locator(".ix-tool-out").inner_text()
    assert output.startswith('{"amount":49.5,"charges":2,') and output.endswith("\u2026")
    assert len(output) == 120
    box = line.bounding_box()
    assert box is not None and box["height"] < 30  # one line
    full = out.locator(".ix-tool-full")
    assert line.get_attribute("aria-expanded") == "false" and full.is_hidden()
    assert full.get_attribute("id") == line.get_attribute("aria-controls")
    line.focus()
    page.keyboard.press("Enter")  # a button: the keyboard opens it as a click does
    assert line.get_attribute("aria-expanded") == "true" and full.is_visible()
    assert '"invoice_id": "INV-2291"' in full.locator(".ix-json").first.inner_text()
    page.keyboard.press(" ")
    assert line.get_attribute("aria-expanded") == "false" and full.is_hidden()


def test_every_tool_call_opens_and_folds_at_once(page: Any, drawn: Any) -> None:
    out = drawn([REFUND, {**REFUND, "name": "issue_refund", "status": "error"}],
                compactTools=True, toolsOpen=True)
    assert out.locator(".ix-tool-line[aria-expanded=true]").count() == 2
    assert out.locator(".ix-status-error").inner_text() == "error"
    page.evaluate("IntrospectionTranscript.setToolsOpen(document.getElementById('t'), false)")
    assert out.locator(".ix-tool-line[aria-expanded=false]").count() == 2
    assert out.locator(".ix-tool-full:visible").count() == 0


def test_what_the_line_shows_is_cut_short_and_drawn_as_untrusted_text(drawn: Any) -> None:
    events = [{"type": "tool", "name": "<b>x</b>\u202e", "status": "ok",
               "input": {"q": "\U0001f600" * 200}, "output": "<img src=x onerror=alert(1)>"},
              {"type": "tool", "name": "no_input", "status": "ok", "output": None},
              {"type": "tool", "name": "list_input", "status": "ok", "input": [1, 2]}]
    out = drawn(events, compactTools=True)
    assert out.locator(".ix-tool-name").first.inner_text() == "<b>x</b>\\u202e"
    assert out.locator("b, img").count() == 0
    args = out.locator(".ix-tool-args").first.inner_text()
    assert args.endswith("\u2026)") and len(args) <= 102
    assert args.encode("utf-16-le", "strict")  # no half of a character beyond U+FFFF
    assert out.locator(".ix-tool-out").first.inner_text() == '"<img src=x onerror=alert(1)>"'
    assert out.locator(".ix-tool-args").nth(1).inner_text() == "()"
    assert out.locator(".ix-tool-out").nth(1).inner_text() == "null"
    assert out.locator(".ix-tool-args").nth(2).inner_text() == "([1,2])"
    assert out.locator(".ix-tool-out").nth(2).inner_text() == "(missing)"


def test_without_the_option_a_tool_call_is_drawn_as_before(drawn: Any) -> None:
    out = drawn([REFUND])
    assert out.locator(".ix-tool-line").count() == 0
    assert out.locator(".ix-field-name").first.inner_text() == "input"
    assert out.locator(".ix-json").first.is_visible()


def test_the_marks_move_without_drawing_the_transcript_again(page: Any, drawn: Any) -> None:
    message = {"type": "message", "role": "user", "text": "refund"}
    out = drawn([message, REFUND, message], compactTools=True, highlight=[0])
    out.locator(".ix-tool-line").click()
    page.evaluate("IntrospectionTranscript.setHighlight("
                  "document.querySelector('#t .ix-transcript'), [1, 2])")
    assert [out.locator(".ix-event").nth(i).evaluate(
        "(li) => li.classList.contains('ix-gate-match')") for i in range(3)] == [
        False, True, True]
    assert out.locator(".ix-gate-badge").count() == 2
    assert out.locator(".ix-tool-line").get_attribute("aria-expanded") == "true"
    page.evaluate("IntrospectionTranscript.setHighlight("
                  "document.querySelector('#t .ix-transcript'), [])")
    assert out.locator(".ix-gate-match, .ix-gate-badge").count() == 0
