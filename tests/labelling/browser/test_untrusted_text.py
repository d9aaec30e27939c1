"""Untrusted text in the labelling app: bounded time whatever its length, bidi shown.

A 2,000,000-character token that a browser lays out in quadratic time (Thai
letters without a space) renders in bounded time: its first 65,536 characters
in pieces, the rest behind "Show all", which draws it all, also in bounded time.
Bidi controls are shown as visible escapes (``\\u202e``, as the text reports
write them), never obeyed. The same rule draws server-side text in the HTML
report (``webui.page_text``): both give the same page for the same text.

Time limits here are hang guards, generous for a loaded machine (a frozen page
never answers); none measures speed.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from introspection_cli import webui
from tests.labelling.browser.harness import LabelApp
from tests.labelling.browser.keyboard import SAVED, open_app
from tests.labelling.browser.untrusted import (
    BIDI,
    mixed_direction_token,
    thai_token,
    wait_laid_out,
)
from tests.labelling.recipes import UNGATED_JUDGE, row, write_recipe

TOKEN = 2_000_000
HOSTILE_ID = "invoice\u202egnp.exe"


def _hostile_rows() -> list[dict[str, Any]]:
    long_row = row("conv_long", events=[
        {"type": "message", "role": "user", "text": thai_token(TOKEN)},
        {"type": "tool", "name": "lookup", "status": "ok",
         "input": {"q": mixed_direction_token(300_000)}, "output": {"ok": True}},
    ])
    bidi_row = row(HOSTILE_ID, events=[
        {"type": "message", "role": "user", "text": "pay " + "".join(BIDI) + " now"},
        {"type": "tool", "name": "tool\u2067name", "status": "ok",
         "input": {"q": "x\u202ey"}, "output": "\u2066out"},
        {"type": "feedback", "rating": "\u202bbad", "comment": "fine\u202c"},
    ])
    return [long_row, bidi_row]


def test_a_2_mb_token_renders_in_bounded_time_and_shows_all_on_demand(
        tmp_path: Path, page: Any) -> None:
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, _hostile_rows())})
    app = LabelApp.start(recipe)
    try:
        page.set_default_timeout(60_000)
        open_app(page, app.url)
        wait_laid_out(page, ".ix-message .ix-more", timeout_s=60)
        message = page.locator(".ix-message .ix-text")
        fold = message.locator("details.ix-more")
        assert fold.locator("summary").inner_text() == \
            "Show all 2,000,000 characters (1,934,464 more)"
        assert _piece_chars(message) == webui.FOLD_CHARS
        fold.locator("summary").click()
        wait_laid_out(page, ".ix-message .ix-more[open] .ix-piece", timeout_s=120)
        assert _piece_chars(message) == TOKEN
        assert message.locator(".ix-piece").count() == -(-TOKEN // webui.PIECE_CHARS)
        tool_input = page.locator(".ix-tool .ix-json").first
        assert tool_input.locator(".ix-piece").count() > 1  # 300,000 characters: in pieces
        page.keyboard.press("p")  # the page still answers
        page.wait_for_function(SAVED, arg=1, timeout=60_000)
    finally:
        app.kill()


def _piece_chars(container: Any) -> int:
    return int(container.evaluate(
        "(node) => Array.from(node.querySelectorAll('.ix-piece'))"
        ".reduce((n, piece) => n + piece.textContent.length, 0)"))


def test_bidi_controls_are_shown_as_escapes_not_obeyed(tmp_path: Path, page: Any) -> None:
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, _hostile_rows()[1:])})
    app = LabelApp.start(recipe)
    try:
        open_app(page, app.url)
        body = page.locator("body").inner_text()
        escapes = page.locator(".ix-escape").count()
    finally:
        app.kill()
    assert not set(body) & set(BIDI), "a bidi control reached the page as text"
    assert "invoice\\u202egnp.exe" in body  # the conversation id, in the row's header
    assert "pay " + "".join(BIDI.values()) + " now" in body
    for escaped in ("tool\\u2067name", "\\u202bbad", "fine\\u202c", "\\u2066out", "x\\u202ey"):
        assert escaped in body, escaped
    assert escapes == len(BIDI) + 6  # the id, the message, and each of the tool's and feedback's


def _samples() -> list[str]:
    """Texts for both renderers: short and long, with and without spaces and line breaks,
    controls of every kind, markup; all below U+FFFF (where both count alike)."""
    pick = random.Random(5)
    alphabet = ["a", "b", " ", "\n", "\t", "\r", "<", "&", ">", "\u00a0", "\x00", "\x1b",
                "\x85", "\u05d0", "\u0e01", "é", *BIDI]
    samples = ["", "plain", "<b>&amp;</b>", "\r\n", "".join(BIDI), "a" * 1024, "a" * 1025,
               ("word " * 400), ("x" * 700 + "\n") * 5, thai_token(5000),
               "q" * webui.FOLD_CHARS, "z" * (webui.FOLD_CHARS + 1),
               ("ab\u202e " * 30_000)]
    for _ in range(60):
        size = pick.choice([5, 50, 900, 1100, 2500, 4000])
        samples.append("".join(pick.choice(alphabet) for _ in range(size)))
    return samples


def test_the_report_and_the_app_draw_untrusted_text_alike(page: Any) -> None:
    page.set_content(f"<div id=server></div><div id=client></div>"
                     f"<script>{webui.asset_text(webui.TRANSCRIPT_JS)}</script>")
    for sample in _samples():
        same = page.evaluate("""([markup, text]) => {
            const server = document.getElementById("server");
            const client = document.getElementById("client");
            server.innerHTML = markup;
            client.replaceChildren(IntrospectionTranscript.text(text));
            for (const more of client.querySelectorAll("details.ix-more")) {
              more.open = true;
              more.dispatchEvent(new Event("toggle"));  // drawn when opened, at once here
            }
            for (const more of server.querySelectorAll("details.ix-more")) more.open = true;
            return server.innerHTML === client.innerHTML ? true
              : [server.innerHTML.slice(0, 300), client.innerHTML.slice(0, 300)];
        }""", [webui.page_text(sample), sample])
        assert same is True, (json.dumps(sample[:80]), same)


def test_a_piece_never_splits_a_character_beyond_u_ffff(page: Any) -> None:
    page.set_content(f"<div id=t></div><script>{webui.asset_text(webui.TRANSCRIPT_JS)}"
                     "</script>")
    text = "a" + "\U0001f600" * 40_000  # 80,001 UTF-16 units
    pieces = page.evaluate("""(text) => {
        const node = IntrospectionTranscript.text(text);
        const more = node.querySelector("details.ix-more");
        more.open = true;
        more.dispatchEvent(new Event("toggle"));
        return Array.from(node.querySelectorAll(".ix-piece"), (p) => p.textContent);
    }""", text)
    assert "".join(pieces) == text
    assert all(piece.encode("utf-16-le", "strict") for piece in pieces)  # no lone surrogate
