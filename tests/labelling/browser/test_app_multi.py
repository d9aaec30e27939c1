"""Several judges in one pass (``judges label --judge billing --judge helpful``) in the real
browser: each conversation once with a label row per judge, the keys on the judge in
focus, Tab / Shift-Tab between judges, each write in its own judge's file byte for byte,
a gate miss shown for the judge it misses, and a conversation one file lacks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.labelling.browser.harness import LabelApp
from tests.labelling.browser.keyboard import open_app
from tests.labelling.recipes import (
    GATED_JUDGE,
    UNGATED_JUDGE,
    calibration,
    row,
    rows_of,
    write_recipe,
)

SHOWS_ITEM = "(key) => location.hash === '#item=' + key"
STATUS = "(text) => document.getElementById('status').textContent.startsWith(text)"


def _recipe(root: Path) -> Path:
    """billing (gated on refund|invoice): c1, c2 (a miss), c5; helpful: c2, c1, c4, and c5
    with other text. Conversations: 1 c1, 2 c2, 3 c5 (billing's), 4 c4, 5 c5 (helpful's)."""
    c1, c2 = row("c1", "Please refund invoice INV-1"), row("c2", "What time is it?")
    return write_recipe(root, {
        "billing": (GATED_JUDGE, [c1, c2, row("c5", "Refund, first text")]),
        "helpful": (UNGATED_JUDGE, [c2, c1, row("c4", "Refund order 4"),
                                    row("c5", "Refund, second text")]),
    })


@pytest.fixture
def multi(tmp_path: Path) -> Iterator[tuple[Path, LabelApp]]:
    recipe = _recipe(tmp_path / "r")
    app = LabelApp.start(recipe, "--judge", "billing", "--judge", "helpful")
    yield recipe, app
    app.kill()


def _focus(page: Any) -> str:
    """The judge in focus: its label row is marked (aria-current) and its rubric shown."""
    focused = page.locator(".judge-row[aria-current=true]")
    assert focused.count() == 1
    name = str(focused.locator(".judge-row-name").inner_text())
    assert page.locator("#rubric-name").inner_text() == name
    assert page.locator("#label-for").inner_text() == name + ":"
    return name


def _row(page: Any, judge: str) -> str:
    return str(page.locator(".judge-row", has=page.locator(".judge-row-name",
                                                            has_text=judge)).inner_text())


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")


def _with(line: bytes, **values: str | None) -> bytes:
    for key, value in values.items():
        line = line.replace(f'"{key}": null'.encode(), f'"{key}": {json.dumps(value)}'.encode())
    return line


def test_one_pass_labels_each_judge_in_its_own_file(multi: tuple[Path, LabelApp], browser: Any,
                                                    artifacts: Path) -> None:
    recipe, app = multi
    billing, helpful = calibration(recipe, "billing"), calibration(recipe, "helpful")
    billing_before, helpful_before = _lines(billing), _lines(helpful)
    page = browser.new_context(viewport={"width": 1280, "height": 850}).new_page()
    open_app(page, app.url)
    assert page.locator(".judge-row").count() == 2
    assert "line 1" in _row(page, "billing") and "line 2" in _row(page, "helpful")
    assert "gate matches event 1" in _row(page, "billing")
    assert _focus(page) == "billing"
    assert page.locator(".ix-gate-match").count() == 1  # billing's gate matched event 1
    page.locator(".ix-tool-line").click()
    page.screenshot(path=str(artifacts / "multi-judge-1280.png"))
    page.locator("body").click(position={"x": 5, "y": 845})
    page.keyboard.press("p")
    page.wait_for_function(STATUS, arg="Saved line 1 of billing: expected pass.")
    assert _focus(page) == "helpful"  # the next judge without a label; same conversation
    assert page.locator(".ix-gate-match").count() == 0  # helpful has no gate
    assert page.locator(".ix-tool-line").get_attribute("aria-expanded") == "true"  # kept
    assert page.evaluate("location.hash") == "#item=1"
    page.keyboard.press("Shift+Tab")
    page.wait_for_function("() => document.activeElement.dataset.index === '0'")
    assert _focus(page) == "billing"
    page.keyboard.press("Tab")
    page.wait_for_function("() => document.activeElement.dataset.index === '1'")
    assert _focus(page) == "helpful"
    page.keyboard.press("Tab")  # past the last judge: on through the page, as Tab always is
    page.wait_for_function("() => !document.activeElement.classList.contains('judge-row')")
    assert _focus(page) == "helpful"
    page.keyboard.press("f")
    page.wait_for_function(STATUS, arg="Saved line 2 of helpful: expected fail.")
    page.wait_for_function(SHOWS_ITEM, arg=2)  # both labelled: the next conversation
    assert _lines(billing) == [_with(billing_before[0], expected="pass"), *billing_before[1:]]
    assert _lines(helpful) == [helpful_before[0], _with(helpful_before[1], expected="fail"),
                               *helpful_before[2:]]
    page.context.close()


def test_a_gate_miss_is_shown_for_the_judge_it_misses(multi: tuple[Path, LabelApp],
                                                      page: Any, artifacts: Path) -> None:
    recipe, app = multi
    page.goto(app.url)
    page.wait_for_selector("body[data-ready=true]")
    page.keyboard.press("ArrowRight")
    page.wait_for_function(SHOWS_ITEM, arg=2)
    assert "gate miss (usually not_applicable)" in _row(page, "billing")
    assert "gate" not in _row(page, "helpful")  # an ungated judge has no gate to miss
    assert page.locator(".judge-row-miss").count() == 1
    assert _focus(page) == "billing"
    assert page.locator("#gate").inner_text().startswith(
        "Gate of billing: does not match this conversation")
    assert page.locator(".ix-gate-match").count() == 0
    page.screenshot(path=str(artifacts / "multi-judge-gate-miss.png"))
    page.keyboard.press("n")
    page.wait_for_function(STATUS, arg="Saved line 2 of billing: expected not_applicable.")
    assert _focus(page) == "helpful"
    assert page.locator("#gate").is_hidden()  # the judge in focus has no gate
    page.keyboard.press("2")  # a split for the judge in focus; it stays in focus
    page.wait_for_function(STATUS, arg="Saved line 1 of helpful: split dev.")
    assert _focus(page) == "helpful"
    first = rows_of(calibration(recipe, "helpful"))[0]
    assert (first["expected"], first["split"]) == (None, "dev")
    page.keyboard.press("u")
    page.wait_for_function(STATUS, arg="Undone: line 1 of helpful: split dev.")
    assert rows_of(calibration(recipe, "helpful"))[0]["split"] is None
    page.keyboard.press("u")
    page.wait_for_function(STATUS, arg="Undone: line 2 of billing: expected not_applicable.")
    assert rows_of(calibration(recipe, "billing"))[1]["expected"] is None


def test_a_conversation_a_file_lacks_or_holds_with_other_text(multi: tuple[Path, LabelApp],
                                                              page: Any) -> None:
    recipe, app = multi
    before = {name: calibration(recipe, name).read_bytes() for name in ("billing", "helpful")}
    page.goto(app.url + "#item=3")  # the token is traded for a cookie; the hash is kept
    page.wait_for_selector("body[data-ready=true]")
    page.wait_for_function(SHOWS_ITEM, arg=3)
    assert "other text (another snapshot_hash): it is its own conversation here, number 5" \
        in _row(page, "helpful")
    assert "Refund, first text" in page.locator("#transcript").inner_text()
    page.keyboard.press("Tab")
    assert _focus(page) == "helpful"
    page.keyboard.press("p")
    page.wait_for_function(STATUS, arg="helpful's file holds this conversation_id with other")
    assert page.locator("button[data-action=pass]").is_disabled()
    assert {name: calibration(recipe, name).read_bytes() for name in before} == before
    page.keyboard.press("ArrowRight")
    page.wait_for_function(SHOWS_ITEM, arg=4)
    assert "Not in billing's calibration file" in _row(page, "billing")
    assert _focus(page) == "helpful"  # the only judge with a row to label
    page.keyboard.press("ArrowRight")
    page.wait_for_function(SHOWS_ITEM, arg=5)
    assert "Refund, second text" in page.locator("#transcript").inner_text()
    assert "number 3" in _row(page, "billing")
    page.keyboard.press("f")
    page.wait_for_function(STATUS, arg="Saved line 4 of helpful: expected fail.")
    assert rows_of(calibration(recipe, "helpful"))[3]["expected"] == "fail"
    assert rows_of(calibration(recipe, "billing"))[2]["expected"] is None
    page.wait_for_selector("#done:not([hidden])")  # the last conversation: the end
    done = page.locator("#done").inner_text()
    assert done.startswith("End of the queue: billing 0 of 3, helpful 1 of 4 labelled. "
                           "6 row(s) still unlabelled:")
    for left in ("c1: billing line 1, helpful line 2", "c2: billing line 2, helpful line 1",
                 "c5: billing line 3", "c4: helpful line 3"):
        assert left in done, left


def test_the_gate_miss_action_of_one_judge_keeps_what_another_must_label(
        multi: tuple[Path, LabelApp], page: Any) -> None:
    recipe, app = multi
    page.goto(app.url)
    page.wait_for_selector("body[data-ready=true]")
    start = page.locator(".bulk-start[data-judge=billing]")
    assert start.inner_text() == "Label the 1 gate miss of billing not_applicable…"
    start.click()
    page.locator("#bulk-yes").click()
    page.wait_for_function(STATUS, arg="Saved: 1 gate misses of billing labelled "
                                       "not_applicable (u undoes this).")
    assert "5 in the queue" in page.locator("#progress").inner_text()  # helpful's c2 is left
    assert [r["expected"] for r in rows_of(calibration(recipe, "billing"))] == [
        None, "not_applicable", None]
    assert "none left unlabelled" in page.locator("#bulk").inner_text()
