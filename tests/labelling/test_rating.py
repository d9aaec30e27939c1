"""A rater's label: recorded as their annotation, and written to ``expected`` by the rules
(the first label; a sole rater's own relabel; never over another rater's; always by an
adjudication), by the byte rule (property test), both files or neither."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from introspection_cli.annotations.file import (
    AnnotationChange,
    read_annotations,
    write_changes,
)
from introspection_cli.annotations.location import annotations_path
from introspection_cli.annotations.record import ADJUDICATED, Annotation
from introspection_cli.annotations.units import rated_units
from introspection_cli.fixture.byterule import LineEdit, write_edits
from introspection_cli.fixture.rows import check_line
from introspection_cli.labelling.calibration import read_calibration
from introspection_cli.labelling.rating import (
    Rating,
    RatingRefused,
    apply_plan,
    plan_ratings,
)
from tests.fixture.rowmaker import make_row
from tests.fixture.spelling import SpelledRow, spelled_rows

AT = "2026-11-21T09:30:00Z"


def _files(tmp_path: Path, *rows: dict[str, object]) -> tuple[Path, Path]:
    calibration = tmp_path / "judges" / "j.calibration.jsonl"
    calibration.parent.mkdir(exist_ok=True)
    calibration.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in rows))
    return calibration, annotations_path(calibration.parent, "j")


def _rate(calibration: Path, annotations: Path, *ratings: Rating) -> None:
    plan = plan_ratings(read_calibration(calibration), read_annotations(annotations), ratings,
                        AT)
    apply_plan(plan, _writer(calibration), annotations)


def _writer(calibration: Path) -> Callable[[Sequence[LineEdit]], None]:
    def write(edits: Sequence[LineEdit]) -> None:
        write_edits(calibration, edits)
    return write


def _state(calibration: Path, annotations: Path) -> tuple[str | None, dict[str, str]]:
    (row,) = read_calibration(calibration).rows
    labels = {a.rater: a.label for a in read_annotations(annotations).annotations}
    return row.expected, labels


def test_the_first_label_goes_to_expected_and_a_later_rater_s_does_not(tmp_path: Path) -> None:
    calibration, annotations = _files(tmp_path, make_row("c1", expected=None, split=None))
    _rate(calibration, annotations, Rating("ana", 1, "pass", "reads well", set_note=True))
    assert _state(calibration, annotations) == ("pass", {"ana": "pass"})
    _rate(calibration, annotations, Rating("ben", 1, "fail"))
    assert _state(calibration, annotations) == ("pass", {"ana": "pass", "ben": "fail"})
    (unit,) = rated_units(read_annotations(annotations).annotations,
                          [(r.conversation_id, r.snapshot_hash, r.expected)
                           for r in read_calibration(calibration).rows]).units.values()
    assert unit.conflict == "disagree"
    _rate(calibration, annotations, Rating(ADJUDICATED, 1, "fail", "the refund is wrong",
                                           set_note=True))
    assert _state(calibration, annotations) == ("fail", {"ana": "pass", "ben": "fail",
                                                         ADJUDICATED: "fail"})
    _rate(calibration, annotations, Rating("chen", 1, "pass"))  # settled: expected stays
    assert _state(calibration, annotations)[0] == "fail"


def test_a_sole_rater_changing_their_mind_changes_expected(tmp_path: Path) -> None:
    calibration, annotations = _files(tmp_path, make_row("c1", expected=None, split=None))
    _rate(calibration, annotations, Rating("ana", 1, "pass"))
    _rate(calibration, annotations, Rating("ana", 1, "fail"))
    assert _state(calibration, annotations) == ("fail", {"ana": "fail"})


def test_a_label_given_before_raters_is_never_overwritten(tmp_path: Path) -> None:
    calibration, annotations = _files(tmp_path, make_row("c1", expected="pass", split=None))
    _rate(calibration, annotations, Rating("ana", 1, "fail"))
    assert _state(calibration, annotations) == ("pass", {"ana": "fail"})


def test_a_note_alone_keeps_the_label_and_needs_one(tmp_path: Path) -> None:
    calibration, annotations = _files(tmp_path, make_row("c1", expected=None, split=None))
    with pytest.raises(RatingRefused, match="has not labelled this row yet"):
        _rate(calibration, annotations, Rating("ana", 1, None, "why", set_note=True))
    _rate(calibration, annotations, Rating("ana", 1, "pass", "first", set_note=True))
    _rate(calibration, annotations, Rating("ana", 1, None, "  second thoughts ", set_note=True))
    _rate(calibration, annotations, Rating("ana", 1, "pass"))  # a label alone keeps the note
    (annotation,) = read_annotations(annotations).annotations
    assert (annotation.label, annotation.note) == ("pass", "second thoughts")


def test_when_the_annotations_cannot_be_written_the_label_is_taken_back(tmp_path: Path) -> None:
    calibration, annotations = _files(tmp_path, make_row("c1", expected=None, split=None))
    before = calibration.read_bytes()
    plan = plan_ratings(read_calibration(calibration), read_annotations(annotations),
                        [Rating("ana", 1, "pass")], AT)
    other = Annotation(*plan.changes[0].key[:2], "ana", "fail", None, AT)
    write_changes(annotations, [AnnotationChange(other.key, None, other)])  # another program
    with pytest.raises(Exception, match="changed on disk"):
        apply_plan(plan, _writer(calibration), annotations)
    assert calibration.read_bytes() == before


@given(spelled_rows(), st.sampled_from(["pass", "fail", "not_applicable"]),
       st.sampled_from([b"\n", b"\r\n"]), st.integers(0, 2))
def test_an_adjudication_writes_expected_by_the_byte_rule(
        tmp_path_factory: pytest.TempPathFactory, row: SpelledRow, label: str,
        newline: bytes, position: int) -> None:
    target = row.text().encode()
    assume({r.code for r in check_line(target, 1)[1]} <= {"fixture-unlabelled"})
    others = [json.dumps(make_row(f"conv_other_{n}", expected=None, split=None)).encode()
              for n in range(2)]
    lines = [*others[:position], target, *others[position:]]
    directory = tmp_path_factory.mktemp("adjudicate") / "judges"
    directory.mkdir()
    calibration = directory / "j.calibration.jsonl"
    calibration.write_bytes(newline.join(lines) + newline)
    annotations = annotations_path(directory, "j")
    read = read_calibration(calibration).line(position + 1).row
    assert read is not None
    for rater, given_label in (("ana", "pass"), ("ben", "fail")):
        disagreeing = Annotation(read.conversation_id, read.snapshot_hash, rater, given_label,
                                 None, AT)
        write_changes(annotations, [AnnotationChange(disagreeing.key, None, disagreeing)])
    _rate(calibration, annotations, Rating(ADJUDICATED, position + 1, label))
    wanted = row.with_member("expected", label, keep_equal=True).text().encode()
    assert calibration.read_bytes() == newline.join(
        [*others[:position], wanted, *others[position:]]) + newline
    adjudication = read_annotations(annotations).get(
        (read.conversation_id, read.snapshot_hash, ADJUDICATED))
    assert adjudication is not None and adjudication.label == label
