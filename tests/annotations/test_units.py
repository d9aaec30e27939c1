"""Which rows are in conflict: raters who disagree, or agree on a label ``expected`` is
not; an adjudicated row is settled; annotations of no calibration row are orphans."""

from __future__ import annotations

from introspection_cli.annotations.record import ADJUDICATED, Annotation
from introspection_cli.annotations.units import describe_conflict, excluded_ids, rated_units

H1, H2 = "sha256:" + "1" * 64, "sha256:" + "2" * 64


def _a(cid: str, rater: str, label: str, snapshot: str = H1) -> Annotation:
    return Annotation(cid, snapshot, rater, label, None, "2026-11-20T10:04:11Z")


ROWS = [("agree", H1, "pass"), ("split", H1, "pass"), ("settled", H1, "fail"),
        ("against", H1, "pass"), ("alone", H1, "fail"), ("none", H1, None)]
ANNOTATIONS = [
    _a("agree", "ana", "pass"), _a("agree", "ben", "pass"),
    _a("split", "ana", "pass"), _a("split", "ben", "fail"),
    _a("settled", "ana", "pass"), _a("settled", "ben", "fail"),
    _a("settled", ADJUDICATED, "fail"),
    _a("against", "ana", "fail"), _a("against", "ben", "fail"),
    _a("alone", "ana", "fail"),
    _a("agree", "ana", "fail", H2),  # the conversation's other text: no row holds it
    _a("gone", "ben", "pass"),
]


def test_conflicts_and_their_kinds() -> None:
    units = rated_units(ANNOTATIONS, ROWS)
    conflicts = {unit.conversation_id: unit.conflict for unit in units.units.values()}
    assert conflicts == {"agree": None, "split": "disagree", "settled": None,
                         "against": "expected", "alone": None}
    assert units.raters == ["ana", "ben"]
    assert [describe_conflict(u) for u in units.conflicts] == [
        "ana pass, ben fail", "expected pass; ana fail, ben fail"]


def test_an_adjudication_is_not_a_rater() -> None:
    settled = rated_units(ANNOTATIONS, ROWS).units[("settled", H1)]
    assert set(settled.ratings) == {"ana", "ben"} and settled.adjudication is not None
    assert settled.adjudication.label == "fail"


def test_annotations_of_no_row_are_orphans() -> None:
    units = rated_units(ANNOTATIONS, ROWS)
    assert sorted((a.conversation_id, a.snapshot_hash) for a in units.orphans) == [
        ("agree", H2), ("gone", H1)]


def test_excluded_rows_keep_the_order_they_are_asked_in() -> None:
    units = rated_units(ANNOTATIONS, ROWS)
    assert excluded_ids(units, ["against", "agree", "split", "elsewhere"]) == ["against",
                                                                                "split"]
