"""Untrusted text in the ``--html`` report: bounded time whatever its length, bidi shown.

A real run (the CLI, the SDK, the stub model server) with a conversation holding
a 2,000,000-character token a browser lays out in quadratic time (its prompt is
too large: an error row, listed with its conversation), and a disagreement whose
conversation id, conversation and model reasoning hold bidi controls. "Unfold
every row" draws every conversation in bounded time, and every bidi control is
shown as a visible escape: in the text the page writes (the id, the reasoning)
and in the text its script draws (the conversation). The time limits are hang
guards, generous for a loaded machine; none measures speed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli
from tests.evaluation.conftest import (  # noqa: F401 (fixtures)
    GATED_JUDGE,
    _clean_env,
    fixture_row,
    stub,
    write_recipe,
)
from tests.evaluation.stub_model_server import (
    RecordedRequest,
    StubModelServer,
    StubReply,
    marker_reply,
    tool_reply,
)
from tests.labelling.browser.conftest import browser  # noqa: F401 (fixture)
from tests.labelling.browser.untrusted import BIDI, thai_token, wait_laid_out

TOKEN = 2_000_000
HOSTILE_ID = "refund\u202egnp.exe"
REASONING = "The user \u202ewrote\u202c one thing and \u2067meant\u2069 another."


def _script(request: RecordedRequest, attempt: int) -> StubReply:
    if "BIDI" in request.user_text:
        return StubReply(body=tool_reply(request.api, json.dumps(
            {"reasoning": REASONING, "verdict": "fail"})))
    return marker_reply(request, attempt, hang_seconds=1)


@pytest.fixture
def report(stub: StubModelServer, tmp_path: Path) -> Path:  # noqa: F811
    stub.script = _script
    rows = [fixture_row("conv_long", "Refund? " + thai_token(TOKEN), expected="pass"),
            fixture_row(HOSTILE_ID, "Refund " + "".join(BIDI) + " BIDI", expected="pass"),
            fixture_row("conv_ok", "Refund please VERDICT:pass", expected="pass")]
    recipe = write_recipe(tmp_path / "recipe", {"billing": (GATED_JUDGE, rows)})
    page = tmp_path / "report.html"
    result = run_cli(["judges", "eval", str(recipe), "--html", str(page),
                      "--max-error-rate", "1"],
                     env={"INTROSPECTION_CACHE_DIR": os.environ["INTROSPECTION_CACHE_DIR"]})
    assert result.returncode == 0, result.stderr
    return page


def test_unfolding_every_row_renders_a_2_mb_token_in_bounded_time(
        report: Path, browser: Any) -> None:  # noqa: F811
    context = browser.new_context(viewport={"width": 660, "height": 1000})
    page = context.new_page()
    try:
        page.set_default_timeout(60_000)
        page.goto(report.as_uri())
        page.wait_for_selector("html[data-ready=true]")
        page.locator("#expand-all").click()
        wait_laid_out(page, "details.row[open] .ix-message .ix-more", timeout_s=60)
        long_row = page.locator("details.row", has_text="conv_long")
        assert "prompt too large" in long_row.locator(".error-text").inner_text()
        fold = long_row.locator(".ix-message details.ix-more").first
        assert fold.locator("summary").inner_text().startswith("Show all 2,000,")
        assert page.locator("details.row[open]").count() == page.locator("details.row").count()
    finally:
        context.close()


def test_bidi_controls_are_shown_as_escapes_in_page_text_and_drawn_text(
        report: Path, browser: Any) -> None:  # noqa: F811
    context = browser.new_context(viewport={"width": 660, "height": 1000})
    page = context.new_page()
    try:
        page.goto(report.as_uri())
        page.wait_for_selector("html[data-ready=true]")
        row = page.locator("details.row", has_text="gnp.exe")
        row.locator("summary").click()
        wait_laid_out(page, "details.row[open] .ix-event", timeout_s=60)
        summary = row.locator("summary").inner_text()
        reasoning = row.locator(".reasoning").inner_text()
        transcript = row.locator(".transcript").inner_text()
        body = page.locator("body").inner_text()
        title = page.title()
    finally:
        context.close()
    assert not set(body + title) & set(BIDI), "a bidi control reached the page as text"
    assert "refund\\u202egnp.exe" in summary
    assert reasoning == "The user \\u202ewrote\\u202c one thing and \\u2067meant\\u2069 another."
    assert "Refund " + "".join(BIDI.values()) + " BIDI" in transcript
