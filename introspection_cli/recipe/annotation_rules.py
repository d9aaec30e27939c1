"""``check`` rules for ``judges/<name>.annotations.jsonl`` files.

* ``annotation-invalid`` (error): a line that is not an annotation (its schema,
  a blank line, a conversation, hash and rater already on another line);
* ``annotation-orphan`` (warning): an annotation of a conversation the judge's
  calibration file does not hold with that ``snapshot_hash`` (re-exported with
  other text, or removed): it is left out of every figure; or a whole file for a
  judge that does not exist.

Standard library only, like every rule ``check`` runs on each commit: the
calibration file's conversations are collected while its rows are verified,
not read a second time.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path

from introspection_cli.annotations.location import ANNOTATIONS_SUFFIX
from introspection_cli.diagnostics import Diagnostic, error, warning
from introspection_cli.recipe.source import entry_problem

_RESTORE = ("annotation files are written by `introspection judges label --rater`: restore "
            "the line from version control, or remove it")


def annotation_diagnostics(path: Path, shown: str, stem: str, judge_files: Collection[str],
                           units: Collection[tuple[str, str]] | None,
                           real_root: str) -> list[Diagnostic]:
    """Every problem of one annotations file; ``units`` are the (conversation_id,
    snapshot_hash) of its judge's trusted calibration rows (None: no calibration file)."""
    from introspection_cli.annotations.file import AnnotationsError, parse_annotations, read_bytes

    problem = entry_problem(path, shown, real_root)
    if problem is not None:
        return [problem]
    if stem not in judge_files:
        return [warning(shown, None, None, "annotation-orphan",
                        f"annotations for judge '{stem}', but judges/{stem}.yaml does not exist",
                        "rename it to match a judge, or delete it")]
    try:
        found, problems = parse_annotations(read_bytes(path))
    except AnnotationsError as exc:
        return [error(shown, None, None, "annotation-invalid", exc.problem, _RESTORE)]
    diagnostics = [error(shown, p.line, None, "annotation-invalid", p.message, _RESTORE)
                   for p in problems]
    known = units if units is not None else ()
    for number, _, annotation in found:
        if annotation.unit not in known:
            diagnostics.append(warning(
                shown, number, None, "annotation-orphan",
                f"{annotation.rater}'s label of conversation {annotation.conversation_id} is "
                f"for a text judges/{stem}.calibration.jsonl does not hold (no row with that "
                "conversation_id and snapshot_hash): it is left out of every figure",
                "label the row as it is now (judges label --rater), then remove this line"))
    return diagnostics


def annotation_files(listing: Collection[Path]) -> Mapping[str, Path]:
    """judge name -> its annotations file, among the entries of ``judges/``."""
    return {path.name.removesuffix(ANNOTATIONS_SUFFIX): path for path in listing
            if path.name.endswith(ANNOTATIONS_SUFFIX) and len(path.name) > len(
                ANNOTATIONS_SUFFIX)}
