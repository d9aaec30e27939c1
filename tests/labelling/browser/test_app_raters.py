"""Raters, notes, blindness, adjudication and notes in the review, in the real browser:
``judges label --rater NAME`` labels blind to every other rater, ``c`` writes a note (Enter
saves, Escape cancels; before a label it waits for the label), ``--adjudicate`` shows every
rater's label and note and writes ``expected``, and ``--review`` shows the rater's note
beside the model's reasoning."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from introspection_cli.annotations.file import read_annotations
from introspection_cli.annotations.location import annotations_path
from introspection_cli.evaluation.outcomes import EvalRun, JudgeRun, RowOutcome
from introspection_cli.reporting.assemble import build_report
from introspection_cli.reporting.model import report_json
from tests.labelling.browser.harness import LabelApp
from tests.labelling.browser.keyboard import SAVED, open_app
from tests.labelling.recipes import UNGATED_JUDGE, calibration, row, rows_of, write_recipe

STATUS = "(text) => document.getElementById('status').textContent.startsWith(text)"
SHOWS_ITEM = "(key) => location.hash === '#item=' + key"


def _recipe(root: Path) -> Path:
    return write_recipe(root, {"helpful": (UNGATED_JUDGE, [
        row("c1", "Refund my order"), row("c2", "Where is my parcel?")])})


def _annotations(recipe: Path) -> dict[tuple[str, str], tuple[str, str | None]]:
    found = read_annotations(annotations_path(recipe / "judges", "helpful")).annotations
    return {(a.conversation_id, a.rater): (a.label, a.note) for a in found}


def _type_note(page: Any, text: str, finish: str = "Enter") -> None:
    page.keyboard.press("c")
    page.wait_for_selector("#note-text")
    page.keyboard.type(text)
    page.keyboard.press(finish)


def test_a_rater_labels_and_notes_by_keyboard(tmp_path: Path, page: Any, apps: list[LabelApp],
                                              artifacts: Path) -> None:
    recipe = _recipe(tmp_path / "r")
    app = LabelApp.start(recipe, "--rater", "Ana Lopes")
    apps.append(app)
    assert any("Labelling as rater Ana Lopes" in line for line in app.startup)
    open_app(page, app.url)
    assert "rater Ana Lopes" in page.locator("#mode").inner_text()
    assert page.locator("#note-button").is_visible()
    page.keyboard.press("f")
    page.wait_for_function(SAVED, arg=1)
    page.wait_for_function(SHOWS_ITEM, arg=2)
    page.keyboard.press("ArrowLeft")
    page.wait_for_function(SHOWS_ITEM, arg=1)
    assert "Your label: fail" in page.locator("#row-head").inner_text()
    _type_note(page, "promised a refund it cannot give")
    page.wait_for_function(STATUS, arg="Saved line 1: the note.")
    assert "Your note: promised a refund it cannot give" in page.locator("#note").inner_text()
    _type_note(page, " and more", finish="Escape")  # Escape: nothing is saved
    page.wait_for_function(STATUS, arg="Note not changed.")
    assert _annotations(recipe) == {("c1", "Ana Lopes"): ("fail",
                                                          "promised a refund it cannot give")}
    page.screenshot(path=str(artifacts / "labelling-rater-note.png"))
    page.keyboard.press("ArrowRight")
    page.wait_for_function(SHOWS_ITEM, arg=2)
    _type_note(page, "tracking link works")  # before the label: it waits for it
    page.wait_for_function(STATUS, arg="Note kept: it is saved with your label")
    assert ("c2", "Ana Lopes") not in _annotations(recipe)
    page.keyboard.press("p")
    page.wait_for_function(SAVED, arg=2)
    assert _annotations(recipe)[("c2", "Ana Lopes")] == ("pass", "tracking link works")
    assert [r["expected"] for r in rows_of(calibration(recipe, "helpful"))] == ["fail", "pass"]


def test_another_rater_sees_neither_the_label_nor_the_note(tmp_path: Path, page: Any,
                                                           apps: list[LabelApp]) -> None:
    recipe = _recipe(tmp_path / "r")
    first = LabelApp.start(recipe, "--rater", "Ana")
    apps.append(first)
    assert first.label(1, note="a secret reason", expected="fail").status == 200
    first.kill()
    second = LabelApp.start(recipe, "--rater", "Ben")
    apps.append(second)
    open_app(page, second.url)
    body = page.locator("body").inner_text()
    assert "a secret reason" not in body and "Ana" not in body
    assert "Your label: \u2014" in page.locator("#row-head").inner_text()
    assert "No note. Press c to say why." in page.locator("#note").inner_text()
    page.keyboard.press("p")
    page.wait_for_function(SAVED, arg=1)
    assert _annotations(recipe) == {("c1", "Ana"): ("fail", "a secret reason"),
                                    ("c1", "Ben"): ("pass", None)}
    assert rows_of(calibration(recipe, "helpful"))[0]["expected"] == "fail"


def test_adjudication_shows_every_rater_and_writes_expected(tmp_path: Path, page: Any,
                                                            apps: list[LabelApp],
                                                            artifacts: Path) -> None:
    recipe = _recipe(tmp_path / "r")
    for rater, first, second in (("Ana", "fail", "pass"), ("Ben", "pass", "pass")):
        app = LabelApp.start(recipe, "--rater", rater)
        apps.append(app)
        app.label(1, expected=first, note=f"{rater}'s reason" + (
            " <img src=x onerror=alert(1)> \u202eevil" if rater == "Ben" else ""))
        app.label(2, expected=second)
        app.kill()
    app = LabelApp.start(recipe, "--adjudicate")
    apps.append(app)
    open_app(page, app.url)
    assert "adjudication" in page.locator("#mode").inner_text()
    ratings = page.locator("#ratings").inner_text()
    assert "The raters disagree." in ratings and "Expected now: fail." in ratings
    assert "Ana: fail \u2014 Ana's reason" in ratings and "Ben: pass \u2014 Ben's reason" in ratings
    # a note is untrusted text: markup shown, never run; a bidi override made visible
    assert "<img src=x onerror=alert(1)>" in ratings and "\\u202e" in ratings
    assert page.locator("#ratings img").count() == 0
    page.screenshot(path=str(artifacts / "labelling-adjudicate.png"))
    _type_note(page, "the refund policy allows it")
    page.wait_for_function(STATUS, arg="Note kept")
    page.keyboard.press("p")
    page.wait_for_function(SAVED, arg=1)
    page.wait_for_selector("#done:not([hidden])")
    assert page.locator("#done").inner_text().startswith("End of the queue: 1 of 1 settled.")
    assert rows_of(calibration(recipe, "helpful"))[0]["expected"] == "pass"
    assert _annotations(recipe)[("c1", "adjudicated")] == ("pass", "the refund policy allows it")


def test_the_review_shows_the_rater_s_note_beside_the_reasoning(tmp_path: Path, page: Any,
                                                                apps: list[LabelApp]) -> None:
    recipe = _recipe(tmp_path / "r")
    app = LabelApp.start(recipe, "--rater", "Ana")
    apps.append(app)
    app.label(1, expected="fail", note="it promised what policy forbids")
    app.kill()
    record = rows_of(calibration(recipe, "helpful"))[0]
    outcome = RowOutcome(1, "c1", None, "fail", "pass", reasoning="The reply is polite.",
                         snapshot_hash=record["snapshot_hash"])
    report = tmp_path / "report.json"
    report.write_text(report_json(build_report(
        EvalRun("r", (JudgeRun("helpful", "openai", "m", (outcome,)),)))))
    for args, note in ((("--rater", "Ana"), "Your note: it promised what policy forbids"),
                       ((), "Ana (fail) noted: it promised what policy forbids")):
        app = LabelApp.start(recipe, "--review", str(report), *args)
        apps.append(app)
        open_app(page, app.url)
        review = page.locator("#review").inner_text()
        assert "The model said pass" in review and "The reply is polite." in review
        assert note in review
        app.kill()
