"""Is a judge's certificate still true? ``none``, ``valid``, ``stale`` or ``invalid``.

Decided from files alone, without any model call: the certificate's schema,
its judge, the judge's current fingerprint (and each part's digest, to say
*what* changed: instructions, gate, model or parameters, harness), and the
digest of the certified split's current labelled rows. ``check``, ``judges
status`` and ``judges estimate`` all ask this one function.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from introspection_cli.certification.certificate import (
    CertificateProblem,
    read_certificate,
    rows_digest,
    split_rows,
)
from introspection_cli.errors import DataError
from introspection_cli.evaluation.fingerprint import judge_identity
from introspection_cli.recipe.model import Judge

State = Literal["none", "valid", "stale", "invalid"]
#: Rows of one split as (snapshot_hash, expected); see :func:`.certificate.split_rows`.
RowsOf = Callable[[str], list[tuple[str, str]]]


@dataclass(frozen=True)
class CertificateState:
    """What a certificate is worth now, and why."""

    state: State
    path: Path
    certificate: dict[str, Any] | None = None
    #: ``invalid``: what is wrong with the file (and where, when known).
    problem: str | None = None
    problem_line: int | None = None
    #: ``stale``: what changed since it was issued, in words (instructions, gate, ..., rows).
    changed: tuple[str, ...] = field(default_factory=tuple)

    @property
    def valid(self) -> bool:
        return self.state == "valid"


def assess_certificate(path: Path, judge: Judge | None, *,
                       rows_of: RowsOf | None = None) -> CertificateState:
    """The state of the certificate at ``path`` for ``judge`` (None: the judge has errors).

    ``rows_of(split)`` gives the split's current labelled rows; by default they
    are read from the judge's calibration file. A judge file with errors cannot
    be fingerprinted, so nothing can vouch for its certificate: ``stale``, the
    judge file named as what changed (``check`` reports the file's own errors).
    """
    if not path.exists():
        return CertificateState("none", path)
    read = read_certificate(path)
    if isinstance(read, CertificateProblem):
        return CertificateState("invalid", path, problem=read.message, problem_line=read.line)
    stem = path.name.removesuffix(".certificate.json")
    if read["judge"] != stem:
        return CertificateState("invalid", path, read,
                                problem=f"it names judge {read['judge']!r}, but the file is "
                                        f"the certificate of {stem!r}")
    if judge is None:
        return CertificateState("stale", path, read, changed=("the judge file (it has errors)",))
    changed = _changed(read, judge, rows_of or _rows_from_file(judge.calibration_path))
    if changed:
        return CertificateState("stale", path, read, changed=tuple(changed))
    return CertificateState("valid", path, read)


def _changed(certificate: dict[str, Any], judge: Judge, rows_of: RowsOf) -> list[str]:
    current = judge_identity(judge)
    changed: list[str] = []
    if certificate["fingerprint"] != current.fingerprint:
        # Parts that differ name the change; if none does, the certificate's own parts
        # do not add up to its fingerprint (hand-edited): say only that it differs.
        changed = current.changed_since(certificate["components"]) or ["fingerprint"]
    try:
        rows = rows_of(certificate["split"])
    except DataError:
        rows = None
    if rows is None or rows_digest(rows) != certificate["rows_digest"]:
        changed.append("rows")
    return changed


def _rows_from_file(calibration: Path) -> RowsOf:
    def rows_of(split: str) -> list[tuple[str, str]]:
        return split_rows(calibration, split) if calibration.is_file() else []
    return rows_of


def describe_change(state: CertificateState) -> str:
    """``instructions and rows changed since it was certified``, for messages."""
    if not state.changed:
        return ""
    names = list(state.changed)
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"{listed} changed since it was certified"
