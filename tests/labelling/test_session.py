"""The labelling session without a browser or HTTP: conversations matched across judges'
files, writes to the right file by the byte rule, the gate-miss action leaving the queue
(and undo bringing it back), and what the end of the queue counts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from introspection_cli.errors import DataError
from introspection_cli.fixture.byterule import plan_edit, write_edits
from introspection_cli.labelling.app.session import LabelSession, LabelWrite, WriteRefused
from introspection_cli.labelling.recipe import label_judges
from tests.labelling.recipes import (
    GATED_JUDGE,
    UNGATED_JUDGE,
    calibration,
    row,
    rows_of,
    write_recipe,
)


def _two_judges(root: Path) -> Path:
    """billing: c1, c2 (a gate miss), c3; helpful: c2, c1, c4, c3 with other text."""
    c1, c2 = row("c1", "Please refund invoice INV-1"), row("c2", "What time is it?")
    return write_recipe(root, {
        "billing": (GATED_JUDGE, [c1, c2, row("c3", "Refund, first text")]),
        "helpful": (UNGATED_JUDGE, [c2, c1, row("c4", "Refund 4"),
                                    row("c3", "Refund, second text")]),
    })


def _session(recipe: Path, *names: str, mode: str = "unlabelled") -> LabelSession:
    judges, _ = label_judges(recipe, names)
    return LabelSession(judges, mode)  # type: ignore[arg-type]


def _labels(item: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["judge"]: entry for entry in item["labels"]}


def _write(session: LabelSession, judge: str, line: int, key: int, **values: str | None
           ) -> dict[str, Any]:
    version = _labels(session.item(key))[judge]["version"]
    return session.label(LabelWrite(judge, line, version, values))


def test_conversations_are_matched_by_id_and_hash(tmp_path: Path) -> None:
    session = _session(_two_judges(tmp_path / "r"), "billing", "helpful")
    assert [(i.identity[0] if i.identity else None, dict(i.lines)) for i in session.items] == [
        ("c1", {"billing": 1, "helpful": 2}), ("c2", {"billing": 2, "helpful": 1}),
        ("c3", {"billing": 3}), ("c4", {"helpful": 3}), ("c3", {"helpful": 4})]
    assert session.queue == [1, 2, 3, 4, 5]
    first = session.item(1)
    assert first["conversation_id"] == "c1" and first["events"][0]["text"].startswith("Please")
    assert [(e["judge"], e["line"], e["writable"]) for e in first["labels"]] == [
        ("billing", 1, True), ("helpful", 2, True)]
    other_text = _labels(session.item(3))["helpful"]
    assert other_text["line"] is None and not other_text["writable"]
    assert "other text (another snapshot_hash)" in other_text["absent"]
    assert "number 5" in other_text["absent"]
    assert "number 3" in _labels(session.item(5))["billing"]["absent"]
    assert "Not in billing's calibration file" in _labels(session.item(4))["billing"]["absent"]
    gates = {name: e["gate"] for name, e in _labels(session.item(2)).items()}
    assert gates == {"billing": {"applies": False, "matches": [], "error": None},
                     "helpful": None}
    with pytest.raises(DataError, match="there is no conversation 6"):
        session.item(6)


def test_each_write_goes_to_its_judges_file_by_the_byte_rule(tmp_path: Path) -> None:
    recipe = _two_judges(tmp_path / "r")
    billing, helpful = calibration(recipe, "billing"), calibration(recipe, "helpful")
    billing_before, helpful_before = billing.read_bytes(), helpful.read_bytes().split(b"\n")
    session = _session(recipe, "billing", "helpful")
    answer = _write(session, "helpful", 2, 1, expected="fail", split="dev")
    assert answer["message"] == "Saved line 2 of helpful: expected fail, split dev."
    assert _labels(answer["item"])["helpful"]["expected"] == "fail"
    assert billing.read_bytes() == billing_before
    assert helpful.read_bytes().split(b"\n") == [
        helpful_before[0], helpful_before[1].replace(b'"expected": null, "split": null',
                                                     b'"expected": "fail", "split": "dev"'),
        *helpful_before[2:]]
    assert session.overview()["progress"] == {"billing": {"labelled": 0, "total": 3},
                                              "helpful": {"labelled": 1, "total": 4}}
    session.undo()
    assert helpful.read_bytes().split(b"\n") == helpful_before
    with pytest.raises(DataError, match="judge other is not labelled in this session"):
        session.label(LabelWrite("other", 1, "x", {"expected": "pass"}))


def test_a_line_changed_on_disk_is_refused_and_shown_again(tmp_path: Path) -> None:
    recipe = _two_judges(tmp_path / "r")
    session = _session(recipe, "billing", "helpful")
    version = _labels(session.item(1))["billing"]["version"]
    path = calibration(recipe, "billing")
    edit = plan_edit(1, path.read_bytes().split(b"\n")[0], {"expected": "pass"})
    assert edit is not None
    write_edits(path, [edit])  # another program labels it first
    changed = path.read_bytes()
    with pytest.raises(WriteRefused) as refused:
        session.label(LabelWrite("billing", 1, version, {"expected": "fail"}))
    assert refused.value.message.startswith("Line 1 of billing changed on disk")
    assert refused.value.item is not None
    assert _labels(refused.value.item)["billing"]["expected"] == "pass"
    assert path.read_bytes() == changed


def test_a_conversation_is_found_where_it_moved(tmp_path: Path) -> None:
    recipe = _two_judges(tmp_path / "r")
    session = _session(recipe, "billing", "helpful")
    path = calibration(recipe, "helpful")
    path.write_bytes(json.dumps(row("c0")).encode() + b"\n" + path.read_bytes())  # by hand
    entry = _labels(session.item(1))["helpful"]  # c1, line 2 when the session started
    assert entry["line"] == 3 and session.item(1)["conversation_id"] == "c1"
    _write(session, "helpful", 3, 1, expected="pass")
    assert [r["source"]["conversation_id"] for r in rows_of(path) if r["expected"]] == ["c1"]


def test_the_gate_miss_action_takes_what_it_finished_out_of_the_queue(tmp_path: Path) -> None:
    rows = [row("hit_1", "refund"), row("miss_1", "hello"), row("miss_2", "time?"),
            row("hit_2", "invoice")]
    recipe = write_recipe(tmp_path / "r", {"billing": (GATED_JUDGE, rows)})
    session = _session(recipe)
    assert session.overview()["gate_misses"] == {"billing": 2}
    answer = session.label_gate_misses("billing", 2)
    assert answer["message"] == ("Saved: 2 gate misses labelled not_applicable; 2 left the "
                                 "queue (u undoes this).")
    assert answer["queue"] == session.queue == [1, 4]
    overview = session.overview()
    assert overview["progress"] == {"billing": {"labelled": 0, "total": 2}}
    assert overview["remaining"] == {
        "unlabelled": 2, "rejected": 0, "more": 0,
        "items": [{"item": 1, "conversation_id": "hit_1",
                   "labels": [{"judge": "billing", "line": 1, "rejected": False}]},
                  {"item": 4, "conversation_id": "hit_2",
                   "labels": [{"judge": "billing", "line": 4, "rejected": False}]}]}
    undone = session.undo()
    assert undone["queue"] == session.queue == [1, 2, 3, 4]
    assert [r["expected"] for r in rows_of(calibration(recipe))] == [None] * 4
    with pytest.raises(WriteRefused, match="there are now 2 unlabelled gate misses"):
        session.label_gate_misses("billing", 3)  # the page's count is stale: nothing written


def test_with_several_judges_a_conversation_stays_while_one_must_label_it(
        tmp_path: Path) -> None:
    recipe = _two_judges(tmp_path / "r")
    session = _session(recipe, "billing", "helpful")
    answer = session.label_gate_misses("billing", 1)  # c2, which helpful has not labelled
    assert answer["message"] == ("Saved: 1 gate misses of billing labelled not_applicable "
                                 "(u undoes this).")
    assert session.queue == [1, 2, 3, 4, 5]
    session.undo()
    _write(session, "helpful", 1, 2, expected="pass")
    answer = session.label_gate_misses("billing", 1)
    assert "1 left the queue" in answer["message"] and session.queue == [1, 3, 4, 5]
    with pytest.raises(WriteRefused, match="Judge helpful has no gate"):
        session.label_gate_misses("helpful", 0)


def test_the_gate_miss_action_leaves_other_queues_whole(tmp_path: Path) -> None:
    rows = [row("hit_1", "refund"), row("miss_1", "hello")]
    recipe = write_recipe(tmp_path / "r", {"billing": (GATED_JUDGE, rows)})
    session = _session(recipe, mode="all")  # --all asks for every row
    session.label_gate_misses("billing", 1)
    assert session.queue == [1, 2]


def test_what_is_left_counts_unlabelled_and_rejected_rows(tmp_path: Path) -> None:
    tampered = row("c_bad")
    tampered["judge_input"]["events"][0]["text"] = "edited"  # type: ignore[index]
    rows = [row(f"c{n}") for n in range(1, 25)] + [tampered]
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, rows)})
    session = _session(recipe)
    _write(session, "helpful", 2, 2, expected="pass")
    remaining = session.overview()["remaining"]
    assert (remaining["unlabelled"], remaining["rejected"]) == (23, 1)
    assert len(remaining["items"]) == 20 and remaining["more"] == 4  # 24 conversations left
    assert [i["conversation_id"] for i in remaining["items"][:2]] == ["c1", "c3"]


def test_two_judges_sharing_one_file_are_refused(tmp_path: Path) -> None:
    from introspection_cli.errors import UsageError

    recipe = _two_judges(tmp_path / "r")
    helpful = calibration(recipe, "helpful")
    helpful.unlink()
    helpful.symlink_to("billing.calibration.jsonl")
    with pytest.raises(UsageError, match="judges billing and helpful share one calibration"):
        label_judges(recipe, ["billing", "helpful"])


def test_review_queues_a_conversation_any_judges_report_disagrees_with(tmp_path: Path) -> None:
    from introspection_cli.evaluation.outcomes import EvalRun, JudgeRun, RowOutcome
    from introspection_cli.labelling.app.review import build_review, load_report_rows
    from introspection_cli.labelling.calibration import read_calibration
    from introspection_cli.reporting.assemble import build_report
    from introspection_cli.reporting.model import report_json

    recipe = _two_judges(tmp_path / "r")
    for name, line, label in (("billing", 1, "pass"), ("billing", 3, "fail"),
                              ("helpful", 1, "pass"), ("helpful", 3, "pass")):
        path = calibration(recipe, name)
        edit = plan_edit(line, path.read_bytes().split(b"\n")[line - 1], {"expected": label})
        assert edit is not None
        write_edits(path, [edit])

    def run(name: str, outcomes: dict[int, str]) -> JudgeRun:
        records = rows_of(calibration(recipe, name))
        return JudgeRun(name, "openai", "m", tuple(
            RowOutcome(line, records[line - 1]["source"]["conversation_id"], None,
                       records[line - 1]["expected"], outcome,  # type: ignore[arg-type]
                       snapshot_hash=records[line - 1]["snapshot_hash"])
            for line, outcome in outcomes.items()))

    report = tmp_path / "report.json"
    report.write_text(report_json(build_report(EvalRun(str(recipe), (
        run("billing", {1: "pass", 3: "pass"}), run("helpful", {1: "fail", 3: "pass"}))))))
    judges, _ = label_judges(recipe, ["billing", "helpful"])
    reviews = {j.name: build_review(load_report_rows(report, j.name),
                                    read_calibration(j.calibration_path)) for j in judges}
    session = LabelSession(judges, "review", reviews)
    assert session.queue == [2, 3]  # c2 (helpful disagrees), c3 (billing disagrees)
    labels = _labels(session.item(2))
    assert labels["helpful"]["review"]["outcome"] == "fail" and labels["billing"]["review"] is None
    assert _labels(session.item(3))["billing"]["review"]["outcome"] == "pass"
