"""The queue in the real browser: rows the gate-miss action labelled leave it, and its end
counts and names the rows still unlabelled (and rejected) instead of always saying
"Next: split"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.labelling.browser.harness import LabelApp
from tests.labelling.browser.keyboard import SAVED, open_app
from tests.labelling.browser.test_app_browser import _start
from tests.labelling.recipes import (
    GATED_JUDGE,
    UNGATED_JUDGE,
    calibration,
    row,
    rows_of,
    write_recipe,
)

#: The row head shows line N (and not line N0).
SHOWS_LINE = ("(n) => new RegExp('^Line ' + n + '(?![0-9])')"
              ".test(document.getElementById('row-head').textContent)")
DONE = "#done:not([hidden])"


def _shown_line(page: Any) -> int:
    head = str(page.locator("#row-head").inner_text())
    return int(head.split()[1])


def _walk(page: Any) -> list[int]:
    """The lines the queue shows from here on, pressing -> until its end."""
    seen = [_shown_line(page)]
    while True:
        page.keyboard.press("ArrowRight")
        page.wait_for_function("(n) => !document.getElementById('done').hidden || "
                               "!new RegExp('^Line ' + n + '(?![0-9])')"
                               ".test(document.getElementById('row-head').textContent)",
                               arg=seen[-1])
        if page.locator(DONE).is_visible():
            return seen
        seen.append(_shown_line(page))


def test_rows_the_gate_miss_action_labels_leave_the_queue(tmp_path: Path, page: Any,
                                                          apps: list[LabelApp],
                                                          artifacts: Path) -> None:
    rows = [row("hit_1", "Please refund invoice INV-1"), row("miss_1", "What time is it?"),
            row("hit_2", "Where is my REFUND?"), row("miss_2", "Tell me a joke"),
            row("miss_3", "Hello"), row("hit_3", "A refund, please")]
    recipe = write_recipe(tmp_path / "r", {"billing": (GATED_JUDGE, rows)})
    app = _start(apps, recipe)
    open_app(page, app.url)
    assert page.locator("#progress").inner_text().startswith("0 of 6 labelled")
    page.locator("#bulk-start").click()
    assert "They leave the queue" in page.locator("#bulk-confirm").inner_text()
    page.locator("#bulk-yes").click()
    page.wait_for_function("() => document.getElementById('status').textContent.startsWith("
                           "'Saved: 3 gate misses labelled not_applicable; 3 left the queue')")
    assert page.locator("#progress").inner_text().startswith("0 of 3 labelled")
    assert _walk(page) == [1, 3, 6]  # the gate misses are not walked again
    done = page.locator(DONE).inner_text()
    assert "End of the queue: 0 of 3 labelled. 3 row(s) still unlabelled:" in done
    assert "line 1 (hit_1)" in done and "line 6 (hit_3)" in done and "miss" not in done
    assert "Next:" not in done
    page.screenshot(path=str(artifacts / "queue-after-gate-misses.png"))
    page.keyboard.press("u")  # the undo puts them back in the queue
    page.wait_for_function("() => document.getElementById('status').textContent"
                           ".startsWith('Undone: 3 gate misses')")
    assert page.locator("#progress").inner_text().startswith("0 of 6 labelled")
    assert [r["expected"] for r in rows_of(calibration(recipe))] == [None] * 6


def test_the_end_of_the_queue_counts_and_names_what_is_left(tmp_path: Path, page: Any,
                                                             apps: list[LabelApp],
                                                             artifacts: Path) -> None:
    tampered = row("c_bad", "refund")
    tampered["judge_input"]["events"][0]["text"] = "edited after export"  # type: ignore[index]
    rows = [row("c1"), row("c2"), row("c3"), tampered, row("c5")]
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, rows)})
    app = _start(apps, recipe)
    open_app(page, app.url)
    for line, key in ((1, "p"), (2, "s"), (3, "f"), (4, "ArrowRight"), (5, "n")):
        page.wait_for_function(SHOWS_LINE, arg=line)
        page.keyboard.press(key)
        if key in "pfn":
            page.wait_for_function(SAVED, arg=line)
    page.wait_for_selector(DONE)
    done = page.locator(DONE).inner_text()
    assert done.startswith("End of the queue: 3 of 4 labelled. 1 row(s) still unlabelled, "
                           "1 rejected (read-only here; introspection check says why):")
    assert "line 2 (c2)" in done and "line 4 (c_bad, rejected)" in done
    assert "Next:" not in done
    page.screenshot(path=str(artifacts / "end-of-queue-left.png"))
    page.locator(".remaining-go", has_text="line 2").click()  # goes to the row
    page.wait_for_function(SHOWS_LINE, arg=2)
    page.keyboard.press("p")
    page.wait_for_function(SAVED, arg=2)
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.wait_for_selector(DONE)
    done = page.locator(DONE).inner_text()
    assert done.startswith("End of the queue: 4 of 4 labelled. 0 row(s) still unlabelled, "
                           "1 rejected")
    assert [r["expected"] for r in rows_of(calibration(recipe))[:3]] == ["pass", "pass", "fail"]


def test_a_fully_labelled_queue_says_what_comes_next(tmp_path: Path, page: Any,
                                                     apps: list[LabelApp]) -> None:
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, [row("c1"), row("c2")])})
    app = _start(apps, recipe)
    open_app(page, app.url)
    page.keyboard.press("p")
    page.wait_for_function(SAVED, arg=1)
    page.keyboard.press("f")
    page.wait_for_selector(DONE)
    assert page.locator(DONE).inner_text().startswith(
        "End of the queue: 2 of 2 labelled. Every label is already saved")
    assert "Next: introspection judges split." in page.locator(DONE).inner_text()
