"""The labelling session for a rater and for an adjudication, without a browser or HTTP:
blind (never another rater's label or note, nor ``expected``), the rater's own queue and
progress, notes (saved with a label or alone), undo of both files, the gate-miss action
for a rater, and the adjudication queue writing ``expected`` as rater ``adjudicated``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from introspection_cli.annotations.file import read_annotations
from introspection_cli.annotations.location import annotations_path
from introspection_cli.labelling.app.blinds import Blinds
from introspection_cli.labelling.app.session import (
    LabelSession,
    LabelWrite,
    NoteWrite,
    QueueMode,
    WriteRefused,
)
from introspection_cli.labelling.recipe import label_judges
from tests.labelling.recipes import (
    GATED_JUDGE,
    UNGATED_JUDGE,
    calibration,
    row,
    rows_of,
    write_recipe,
)


def _recipe(root: Path) -> Path:
    return write_recipe(root, {"helpful": (UNGATED_JUDGE, [row("c1"), row("c2"), row("c3")])})


def _session(recipe: Path, mode: QueueMode = "unlabelled", *, rater: str | None = None,
             adjudicate: bool = False, judge: str = "helpful") -> LabelSession:
    judges, _ = label_judges(recipe, [judge])
    return LabelSession(judges, "adjudicate" if adjudicate else mode, None,
                        Blinds(rater, adjudicate))


def _entry(session: LabelSession, key: int) -> dict[str, Any]:
    (entry,) = session.item(key)["labels"]
    return entry  # type: ignore[no-any-return]


def _label(session: LabelSession, key: int, label: str, note: str | None = None
           ) -> dict[str, Any]:
    entry = _entry(session, key)
    return session.label(LabelWrite(entry["judge"], entry["line"], entry["version"],
                                    {"expected": label}, note))


def _annotations(recipe: Path) -> dict[tuple[str, str], tuple[str, str | None]]:
    found = read_annotations(annotations_path(recipe / "judges", "helpful")).annotations
    return {(a.conversation_id, a.rater): (a.label, a.note) for a in found}


def test_a_rater_never_sees_another_rater_s_label_or_note(tmp_path: Path) -> None:
    recipe = _recipe(tmp_path / "r")
    ana = _session(recipe, rater="Ana")
    _label(ana, 1, "fail", "promised a refund it cannot give")
    ben = _session(recipe, rater="Ben")
    assert ben.queue == [1, 2, 3]  # Ana's label does not take the row out of Ben's queue
    overview = {k: v for k, v in ben.overview().items() if k != "judges"}  # the rubric says fail
    shown = json.dumps(ben.item(1)["labels"]) + json.dumps(overview)
    assert "fail" not in shown and "promised" not in shown and "Ana" not in shown
    entry = _entry(ben, 1)
    assert (entry["expected"], entry["note"], entry["rated"], entry["ratings"]) == (
        None, None, False, [])
    assert rows_of(calibration(recipe, "helpful"))[0]["expected"] == "fail"  # the first label
    _label(ben, 1, "pass")
    assert _entry(ben, 1)["expected"] == "pass"  # Ben's own label
    assert rows_of(calibration(recipe, "helpful"))[0]["expected"] == "fail"  # not overwritten
    assert _annotations(recipe) == {("c1", "Ana"): ("fail", "promised a refund it cannot give"),
                                    ("c1", "Ben"): ("pass", None)}


def test_a_rater_s_progress_and_queue_are_their_own(tmp_path: Path) -> None:
    recipe = _recipe(tmp_path / "r")
    _label(_session(recipe, rater="Ana"), 2, "pass")
    ana = _session(recipe, rater="Ana")
    assert ana.queue == [1, 3]
    assert ana.overview()["progress"] == {"helpful": {"labelled": 0, "total": 2}}
    assert ana.overview()["rater"] == "Ana"
    assert _session(recipe).queue == [1, 3]  # without --rater: rows without expected


def test_a_note_alone_needs_the_rater_s_label_then_saves(tmp_path: Path) -> None:
    recipe = _recipe(tmp_path / "r")
    ana = _session(recipe, rater="Ana")
    entry = _entry(ana, 1)
    with pytest.raises(WriteRefused, match="has not labelled this row yet"):
        ana.note(NoteWrite("helpful", 1, entry["version"], "why"))
    _label(ana, 1, "pass")
    answer = ana.note(NoteWrite("helpful", 1, _entry(ana, 1)["version"], "clear answer"))
    assert answer["message"] == "Saved line 1: the note."
    assert answer["item"]["labels"][0]["note"] == "clear answer"
    assert _annotations(recipe)[("c1", "Ana")] == ("pass", "clear answer")


def test_undo_puts_both_files_back(tmp_path: Path) -> None:
    recipe = _recipe(tmp_path / "r")
    path = calibration(recipe, "helpful")
    before = path.read_bytes()
    ana = _session(recipe, rater="Ana")
    _label(ana, 1, "fail", "wrong")
    assert ana.undo()["message"] == "Undone: line 1: your label fail, with the note."
    assert path.read_bytes() == before
    assert annotations_path(recipe / "judges", "helpful").read_bytes() == b""


def test_a_note_without_a_rater_is_refused(tmp_path: Path) -> None:
    session = _session(_recipe(tmp_path / "r"))
    entry = _entry(session, 1)
    with pytest.raises(ValueError, match="a note is kept per rater"):
        session.note(NoteWrite("helpful", 1, entry["version"], "why"))
    with pytest.raises(ValueError, match="a note is kept per rater"):
        session.label(LabelWrite("helpful", 1, entry["version"], {"expected": "pass"}, "why"))


def test_the_gate_miss_action_labels_for_the_rater(tmp_path: Path) -> None:
    recipe = write_recipe(tmp_path / "r", {"billing": (GATED_JUDGE, [
        row("c1", "Please refund invoice INV-1"), row("c2", "What time is it?"),
        row("c3", "Nice weather", expected="pass")])})
    ana = _session(recipe, rater="Ana", judge="billing")
    assert ana.overview()["gate_misses"] == {"billing": 2}  # c3's expected is not Ana's label
    answer = ana.label_gate_misses("billing", 2)
    assert answer["lines"] == [2, 3] and answer["queue"] == [1]
    found = read_annotations(annotations_path(recipe / "judges", "billing")).annotations
    assert [(a.conversation_id, a.label) for a in found] == [("c2", "not_applicable"),
                                                             ("c3", "not_applicable")]
    assert [r["expected"] for r in rows_of(calibration(recipe, "billing"))] == [
        None, "not_applicable", "pass"]  # c3's label, given before raters, stays
    ana.undo()
    assert read_annotations(annotations_path(recipe / "judges", "billing")).annotations == ()


def test_adjudication_queues_conflicts_and_writes_expected(tmp_path: Path) -> None:
    recipe = _recipe(tmp_path / "r")
    ana, ben = _session(recipe, rater="Ana"), _session(recipe, rater="Ben")
    for key, (first, second) in enumerate([("fail", "pass"), ("pass", "pass"),
                                           ("fail", "fail")], start=1):
        _label(ana, key, first, "Ana's why" if key == 1 else None)
        _label(ben, key, second)
    judge = _session(recipe, adjudicate=True)
    assert judge.queue == [1]
    entry = _entry(judge, 1)
    assert entry["conflict"] == "disagree" and entry["expected"] == "fail"
    assert [(r["rater"], r["label"], r["note"]) for r in entry["ratings"]] == [
        ("Ana", "fail", "Ana's why"), ("Ben", "pass", None)]
    assert judge.overview()["gate_misses"] == {"helpful": None}
    answer = _label(judge, 1, "pass", "the refund was right")
    assert answer["message"] == "Saved line 1: adjudicated pass, with the note."
    assert rows_of(calibration(recipe, "helpful"))[0]["expected"] == "pass"
    assert _annotations(recipe)[("c1", "adjudicated")] == ("pass", "the refund was right")
    assert _entry(judge, 1)["conflict"] is None
    assert judge.overview()["progress"] == {"helpful": {"labelled": 1, "total": 1}}
