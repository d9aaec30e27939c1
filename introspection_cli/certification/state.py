"""Is a judge's certificate still true? ``none``, ``valid``, ``stale`` or ``invalid``.

Decided from files alone, without any model call, by one function that
``check``, ``judges status`` and ``judges estimate`` all ask:

* **invalid**: not a certificate (its schema), naming another judge, or a claim
  that does not follow from itself or from the repository (:mod:`.validator`:
  a bound that is not its counts' bound, counts the per-row outcomes and the
  labels do not give, a run the exposure file does not hold, a provider or
  model that is not its fingerprint's, a bar below the floor);
* **stale**: it was true, but the judge (its fingerprint: instructions, gate,
  model or parameters, harness), the certified split's rows, the rows its
  raters are in conflict on (:mod:`.raters`), or what the exposure file says of
  the time it was issued, changed since; and every
  version 1 certificate, which records too little to be checked;
* **valid** otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from introspection_cli.certification.certificate import (
    CERTIFICATE_SUFFIX,
    Certificate,
    CertificateProblem,
    LabelledRow,
    LegacyCertificate,
    read_certificate,
    read_split,
    rows_digest,
)
from introspection_cli.certification.exposure import Look
from introspection_cli.certification.validator import (
    MIN_BAR,
    exposure_check,
    intrinsic_problem,
    legacy_problem,
    llm_problem,
    outcomes_problem,
)
from introspection_cli.errors import DataError
from introspection_cli.evaluation.fingerprint import judge_identity
from introspection_cli.recipe.model import Judge

State = Literal["none", "valid", "stale", "invalid"]
#: The labelled rows of one split, in file order.
RowsOf = Callable[[str], Sequence[LabelledRow]]
#: The judge's looks (raises DataError when its exposure file cannot be read).
LooksOf = Callable[[], Sequence[Look]]
Read = Certificate | LegacyCertificate | CertificateProblem
LEGACY_CHANGE = ("its format: a version 1 certificate records neither per-row outcomes nor "
                 "exposure, so nothing it states can be checked")


@dataclass(frozen=True)
class CertificateState:
    """What a certificate is worth now, and why."""

    state: State
    path: Path
    certificate: Certificate | None = None
    #: ``invalid``: what is wrong with the file (and where, when known).
    problem: str | None = None
    problem_line: int | None = None
    #: ``stale``: what changed since it was issued, in words (instructions, gate, ..., rows).
    changed: tuple[str, ...] = field(default_factory=tuple)

    @property
    def valid(self) -> bool:
        return self.state == "valid"


def assess_certificate(path: Path, judge: Judge | None, *, rows_of: RowsOf | None = None,
                       looks_of: LooksOf | None = None, min_bar: float = MIN_BAR,
                       read: Read | None = None) -> CertificateState:
    """The state of the certificate at ``path`` for ``judge`` (None: the judge has errors).

    ``rows_of(split)`` gives the split's current labelled rows and ``looks_of()`` the
    judge's looks; by default both are read from the files beside the judge (and the
    certificate itself, unless ``read`` is what :func:`read_certificate` gave). A judge
    file with errors cannot be fingerprinted, so nothing can vouch for its certificate:
    ``stale``, the judge file named as what changed (``check`` reports its errors).
    """
    if read is None:
        if not path.exists():
            return CertificateState("none", path)
        read = read_certificate(path)
    if isinstance(read, CertificateProblem):
        return CertificateState("invalid", path, problem=read.message, problem_line=read.line)
    stem = path.name.removesuffix(CERTIFICATE_SUFFIX)
    if read.judge != stem:
        return CertificateState("invalid", path, problem=f"it names judge {read.judge!r}, but "
                                f"the file is the certificate of {stem!r}")
    if isinstance(read, LegacyCertificate):
        problem = legacy_problem(read.data)
        return CertificateState("invalid", path, problem=problem) if problem else \
            CertificateState("stale", path, changed=(LEGACY_CHANGE,))
    problem = intrinsic_problem(read, min_bar=min_bar)
    if problem is not None:
        return CertificateState("invalid", path, read, problem=problem)
    if judge is None:
        return CertificateState("stale", path, read, changed=("the judge file (it has errors)",))
    return _against_repository(path, read, judge, rows_of or _rows_from_file(judge),
                               looks_of or _looks_from_file(path))


def _against_repository(path: Path, certificate: Certificate, judge: Judge, rows_of: RowsOf,
                        looks_of: LooksOf) -> CertificateState:
    changed: list[str] = []
    try:
        rows: Sequence[LabelledRow] | None = rows_of(certificate.split)
    except DataError:
        rows = None
    if rows is None or rows_digest((r.snapshot_hash, r.expected) for r in rows) \
            != certificate.rows_digest:
        changed.append("rows")
    elif _excluded_changed(certificate, judge, rows):
        changed.append("annotations (the rows in conflict)")
    elif (problem := outcomes_problem(certificate, _scored(certificate, rows))) is not None:
        return CertificateState("invalid", path, certificate, problem=problem)
    elif certificate.split == "test":
        try:
            looks = looks_of()
        except DataError:
            changed.append("exposure (the exposure file cannot be read)")
        else:
            problem, exposure_changed = exposure_check(certificate, looks, rows)
            if problem is not None:
                return CertificateState("invalid", path, certificate, problem=problem)
            if exposure_changed:
                changed.append("exposure")
    problem = llm_problem(certificate)
    if problem is not None:
        return CertificateState("invalid", path, certificate, problem=problem)
    current = judge_identity(judge)
    if certificate.fingerprint == current.fingerprint:
        if dict(certificate.components) != dict(current.components):
            return CertificateState("invalid", path, certificate, problem=(
                "its components are not the parts of its fingerprint"))
    else:
        parts = current.changed_since(certificate.components)
        if not parts:
            return CertificateState("invalid", path, certificate, problem=(
                "its fingerprint is not made of its components (was it edited by hand?)"))
        changed[:0] = parts
    if changed:
        return CertificateState("stale", path, certificate, changed=tuple(changed))
    return CertificateState("valid", path, certificate)


def _excluded_changed(certificate: Certificate, judge: Judge,
                      rows: Sequence[LabelledRow]) -> bool:
    """Whether the split's rows in conflict (the annotations file's) are no longer the ones
    the certificate left out; an unreadable annotations file counts as changed."""
    from introspection_cli.certification.raters import conflicting_rows

    recorded = certificate.raters.excluded if certificate.raters is not None else ()
    try:
        now = conflicting_rows(judge.path.parent, judge.name, rows)
    except DataError:
        return True
    return sorted(now) != sorted(recorded)


def _scored(certificate: Certificate, rows: Sequence[LabelledRow]) -> list[LabelledRow]:
    """The rows the certificate scored: the split's, less those it left out."""
    left_out = set(certificate.raters.excluded) if certificate.raters is not None else set()
    return [row for row in rows if row.conversation_id not in left_out]


def _rows_from_file(judge: Judge) -> RowsOf:
    def rows_of(split: str) -> Sequence[LabelledRow]:
        calibration = judge.calibration_path
        return read_split(calibration, split).rows if calibration.is_file() else []
    return rows_of


def _looks_from_file(certificate: Path) -> LooksOf:
    def looks_of() -> Sequence[Look]:
        from introspection_cli.certification.exposure_file import exposure_path, read_looks

        judge = certificate.name.removesuffix(CERTIFICATE_SUFFIX)
        return read_looks(exposure_path(certificate.parent, judge))
    return looks_of


def describe_change(state: CertificateState) -> str:
    """``instructions and rows changed since it was certified``, for messages."""
    if not state.changed:
        return ""
    if state.changed == (LEGACY_CHANGE,):
        return f"{LEGACY_CHANGE}: certify the judge again"
    names = list(state.changed)
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"{listed} changed since it was certified"


def valid_certificate(judge: Judge, *, using: str, otherwise: str,
                      min_bar: float = MIN_BAR) -> tuple[Path, Certificate]:
    """``judge``'s certificate when it is valid (for a command that takes figures from
    it); else :class:`~introspection_cli.errors.DataError` saying why and what to do."""
    from introspection_cli.certification.certificate import certificate_path

    path = certificate_path(judge.path.parent, judge.name)
    state = assess_certificate(path, judge, min_bar=min_bar)
    if state.valid and state.certificate is not None:
        return path, state.certificate
    why = {"none": f"there is no {path}",
           "invalid": f"{path} is not a valid certificate ({state.problem})",
           "stale": f"its certificate is stale: {describe_change(state)}",
           "valid": "it records no figures"}[state.state]
    raise DataError(f"judge {judge.name} has no valid certificate to take {using} from: "
                    f"{why}. Certify it (`introspection judges certify --judge {judge.name}`) "
                    f"{otherwise}")
