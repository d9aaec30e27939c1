"""The transcript renderer inlined into a self-contained page (as an offline HTML report
does): it renders, loads nothing, and a hostile conversation stays inert."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from introspection_cli import webui
from tests.labelling.browser.test_app_browser import HOSTILE_EVENTS

PAGE_SCRIPT = """
var data = JSON.parse(document.getElementById("data").textContent);
document.getElementById("out").appendChild(
  IntrospectionTranscript.render(data.events, {highlight: data.highlight}));
document.body.setAttribute("data-ready", "true");
"""


@given(st.text())
def test_script_json_is_inert_in_a_script_element_and_parses_back(text: str) -> None:
    embedded = webui.script_json({"text": text, "end": "</script><!--"})
    assert "<" not in embedded and ">" not in embedded and "&" not in embedded
    assert json.loads(embedded) == {"text": text, "end": "</script><!--"}


def test_a_self_contained_page_renders_the_transcript_inertly(tmp_path: Path,
                                                              browser: Any) -> None:
    transcript_js = webui.asset_text(webui.TRANSCRIPT_JS)
    css = webui.asset_text(webui.TRANSCRIPT_CSS)
    data = webui.script_json({"events": HOSTILE_EVENTS, "highlight": [0]})
    csp = webui.inline_csp([transcript_js, PAGE_SCRIPT], styles=[css])
    html = (f'<!doctype html><html><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
            f"<style>{css}</style></head><body><div id=\"out\"></div>"
            f'<script type="application/json" id="data">{data}</script>'
            f"<script>{transcript_js}</script><script>{PAGE_SCRIPT}</script>"
            "<script>window.__pwned = 'an inline script the CSP does not list ran'</script>"
            "</body></html>")
    path = tmp_path / "report.html"
    path.write_text(html, encoding="utf-8")
    context = browser.new_context()
    page = context.new_page()
    requests: list[str] = []
    dialogs: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready=true]")
    out = page.locator("#out")
    assert out.locator(".ix-event").count() == len(HOSTILE_EVENTS)
    assert out.locator(".ix-gate-match").count() == 1
    assert "<script>window.__pwned = 1" in out.inner_text()
    assert out.locator("script, img, iframe, svg").count() == 0
    assert page.evaluate("window.__pwned") is None  # the unlisted inline script was refused
    assert dialogs == [] and requests == [path.as_uri()]
    context.close()
