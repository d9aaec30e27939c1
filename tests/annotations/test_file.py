"""judges/<name>.annotations.jsonl: each line checked, one line per (conversation, hash,
rater), writes that replace a rater's line and keep every other byte."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from introspection_cli.annotations.file import (
    AnnotationChange,
    AnnotationsError,
    StaleAnnotations,
    parse_annotations,
    read_annotations,
    write_changes,
)
from introspection_cli.annotations.record import Annotation, rater_problem
from tests.hostile.harness import drop_dac

HASH = "sha256:" + "a" * 64


def _a(cid: str, rater: str, label: str = "pass", note: str | None = None,
       at: str = "2026-11-20T10:04:11Z") -> Annotation:
    return Annotation(cid, HASH, rater, label, note, at)


def test_an_annotation_reads_back_from_its_line() -> None:
    annotation = _a("c1", "Ana Lopes", "fail", "promised a refund it cannot give — «sic»")
    ((number, text, read),), problems = parse_annotations(annotation.line() + b"\n")
    assert (number, text, read, problems) == (1, annotation.line(), annotation, [])


@pytest.mark.parametrize(("line", "problem"), [
    (b'{"annotation_version": 1}', "not an annotation: at $: 'conversation_id' is a required"),
    (b'{"a": 1, "a": 2}', "not valid JSON"),
    (b"not json", "not valid JSON"),
    (_a("c1", "Ana").line().replace(b'"pass"', b'"maybe"'), "at $.label"),
    (_a("c1", "Ana").line().replace(b'"Ana"', b'" Ana"'), "starts or ends with a space"),
    (_a("c1", "Ana").line().replace(b'"Ana"', b'"A\\u0007na"'), "control character"),
    (_a("c1", "Ana").line().replace(HASH.encode(), b"sha256:xyz"), "at $.snapshot_hash"),
    (_a("c1", "Ana").line().replace(b'"note": null', b'"note": ""'), "at $.note"),
    (b"", "a blank line"),
])
def test_a_line_that_is_not_an_annotation_is_named(line: bytes, problem: str) -> None:
    found, problems = parse_annotations(line + b"\n" + _a("c2", "Ben").line() + b"\n")
    assert [a.conversation_id for _, _, a in found] == ["c2"]
    assert [p.line for p in problems] == [1]
    assert problem in problems[0].message


def test_one_key_on_two_lines_is_a_problem_on_the_second() -> None:
    data = b"\n".join([_a("c1", "Ana").line(), _a("c1", "Ben").line(),
                       _a("c1", "Ana", "fail").line()]) + b"\n"
    found, problems = parse_annotations(data)
    assert [(a.rater, a.label) for _, _, a in found] == [("Ana", "pass"), ("Ben", "pass")]
    assert [p.line for p in problems] == [3] and "also on line 1" in problems[0].message


def test_reading_refuses_a_file_with_a_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "x.annotations.jsonl"
    path.write_bytes(_a("c1", "Ana").line() + b"\n{}\n")
    with pytest.raises(AnnotationsError, match=r"x\.annotations\.jsonl:2: not an annotation"):
        read_annotations(path)


def test_no_file_is_no_annotations(tmp_path: Path) -> None:
    assert read_annotations(tmp_path / "x.annotations.jsonl").annotations == ()


def test_a_change_replaces_that_line_and_keeps_every_other_byte(tmp_path: Path) -> None:
    path = tmp_path / "x.annotations.jsonl"
    odd = b'{"annotation_version":1,"conversation_id":"c0","snapshot_hash":"' + HASH.encode() \
        + b'","rater":"Zoe","label":"fail","note":null,"at":"2026-01-01T00:00:00Z"}'
    path.write_bytes(odd + b"\r\n" + _a("c1", "Ana").line() + b"\r\n")
    os.chmod(path, 0o640)
    current = read_annotations(path)
    new = _a("c1", "Ana", "fail", "on reflection")
    written = write_changes(path, [AnnotationChange(new.key, current.line_of(new.key), new),
                                   AnnotationChange(("c2", HASH, "Ana"), None, _a("c2", "Ana"))])
    assert path.read_bytes() == (odd + b"\r\n" + new.line() + b"\r\n" + _a("c2", "Ana").line()
                                 + b"\n")
    assert written.get(new.key) == new and os.stat(path).st_mode & 0o777 == 0o640


def test_a_reversed_change_puts_the_file_back(tmp_path: Path) -> None:
    path = tmp_path / "x.annotations.jsonl"
    path.write_bytes(_a("c1", "Ana").line() + b"\n")
    before = path.read_bytes()
    current = read_annotations(path)
    changes = [AnnotationChange(("c1", HASH, "Ana"), current.line_of(("c1", HASH, "Ana")),
                                _a("c1", "Ana", "fail")),
               AnnotationChange(("c2", HASH, "Ana"), None, _a("c2", "Ana"))]
    write_changes(path, changes)
    write_changes(path, [change.reverse() for change in changes])
    assert path.read_bytes() == before


def test_a_line_changed_on_disk_is_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "x.annotations.jsonl"
    path.write_bytes(_a("c1", "Ana").line() + b"\n")
    read = read_annotations(path)
    path.write_bytes(_a("c1", "Ana", "not_applicable").line() + b"\n")  # another program
    after = path.read_bytes()
    key = ("c1", HASH, "Ana")
    with pytest.raises(StaleAnnotations, match="changed on disk"):
        write_changes(path, [AnnotationChange(key, read.line_of(key), _a("c1", "Ana", "fail"))])
    with pytest.raises(StaleAnnotations):  # appending what another program appended meanwhile
        write_changes(path, [AnnotationChange(key, None, _a("c1", "Ana", "fail"))])
    assert path.read_bytes() == after


def test_a_read_only_file_is_refused(tmp_path: Path) -> None:
    """In a child that obeys file modes although the tests run as root."""
    path = tmp_path / "x.annotations.jsonl"
    path.write_bytes(b"")
    os.chmod(path, 0o444)
    code = ("import sys; from pathlib import Path; "
            "from introspection_cli.annotations.file import AnnotationChange, write_changes; "
            "from introspection_cli.annotations.record import Annotation; "
            f"a = Annotation('c1', {HASH!r}, 'Ana', 'pass', None, '2026-11-20T10:04:11Z'); "
            "write_changes(Path(sys.argv[1]), [AnnotationChange(a.key, None, a)])")
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                          text=True, preexec_fn=drop_dac, check=False)
    assert "UsageError" in done.stderr and "is not writable (mode 0444)" in done.stderr
    assert path.read_bytes() == b""


@given(st.text(min_size=1, max_size=70))
@example("\ufeffAna")
@example("Ana\u00a0")
@example("\u3000Ana")
@example("A\u2028na")
@example("Ana\u0085")
@example("\u200bAna")
def test_a_rater_name_is_valid_exactly_when_the_schema_says_so(name: str) -> None:
    """The words ``check`` prints for a bad name and the published schema agree."""
    from introspection_cli.minischema import Validator
    from introspection_cli.resources import load_schema

    record = {**_a("c1", "x").as_json(), "rater": name}
    schema_errors = list(Validator(load_schema("annotation")).iter_errors(record))
    assert (rater_problem(name) is None) == (not schema_errors), (name, schema_errors)


def test_a_change_that_would_not_be_an_annotation_is_never_written(tmp_path: Path) -> None:
    path = tmp_path / "x.annotations.jsonl"
    path.write_bytes(_a("c1", "Ana").line() + b"\n")
    before = path.read_bytes()
    too_long = _a("c2", "Ana", note="x" * 4001)
    with pytest.raises(AnnotationsError, match=r"x\.annotations\.jsonl:2: not an annotation"):
        write_changes(path, [AnnotationChange(too_long.key, None, too_long)])
    assert path.read_bytes() == before
