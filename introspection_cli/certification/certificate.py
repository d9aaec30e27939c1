"""The certificate file ``judges/<name>.certificate.json``: its digest, writing, reading.

A certificate says: this judge version (fingerprint) agreed with human labels
on these rows (``rows_digest``) well enough that the Wilson 95% lower bounds of
its TPR and TNR reached the bar. It is only true while both still hold, which
:mod:`.state` decides without any model call. Standard library only (the schema
is checked with the small validator ``check`` uses), so ``check`` and
``judges status`` can read certificates on every commit.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from introspection_cli import strictjson
from introspection_cli.fsutil import atomic_write_text

CERTIFICATE_VERSION = 1
CERTIFICATE_SUFFIX = ".certificate.json"
SCHEMA_NAME = "certificate"  # schemas/certificate.schema.json
#: Certificates are small; anything larger is not one (and is not read into memory).
MAX_CERTIFICATE_BYTES = 1 << 20


def certificate_path(judges_dir: Path, judge: str) -> Path:
    """Where ``judge``'s certificate lives: beside its judge file."""
    return judges_dir / f"{judge}{CERTIFICATE_SUFFIX}"


def rows_digest(rows: Iterable[tuple[str, str]]) -> str:
    """``sha256:`` of the sorted lines ``snapshot_hash + " " + expected``, each ending in ``\\n``.

    ``rows`` are ``(snapshot_hash, expected)`` of the labelled rows used. Any
    relabelled, added, removed or re-exported row changes it; the order of the
    rows in the file and their other fields (the split aside) do not.
    """
    lines = sorted(f"{snapshot} {expected}\n" for snapshot, expected in rows)
    return "sha256:" + hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class SplitRows:
    """One pass over a calibration file: what a certificate of one split rests on."""

    #: ``(snapshot_hash, expected)`` of every trusted, labelled row of the split.
    rows: list[tuple[str, str]]
    #: ``(line, code, message)`` of every row of the file the fixture rules reject
    #: (blank lines and unlabelled rows are not rejections here).
    rejected: list[tuple[int, str, str]]
    #: split (``unsplit`` for none) -> label -> trusted labelled rows, over the whole file.
    table: dict[str, dict[str, int]] = field(default_factory=dict)


def read_split(calibration: Path, split: str) -> SplitRows:
    """The split's trusted labelled rows, and every rejected row of the whole file.

    Trusted means the row passes every fixture rule (a rejected row is never
    used, by certify or by eval). A rejected row's split cannot be trusted
    either, so it is reported whatever split it claims. Raises
    :class:`~introspection_cli.errors.DataError` when the file cannot be read.
    """
    from introspection_cli.fixture import WARNING_CODES, verify_calibration_file

    rows: list[tuple[str, str]] = []
    rejected: list[tuple[int, str, str]] = []
    table: dict[str, dict[str, int]] = {}
    for result in verify_calibration_file(calibration):
        rejected += [(r.line, r.code, r.message) for r in result.rejections
                     if r.code not in WARNING_CODES]
        row = result.row
        if row is None or row.expected is None:
            continue
        counts = table.setdefault(row.split or "unsplit", {})
        counts[row.expected] = counts.get(row.expected, 0) + 1
        if row.split == split:
            rows.append((row.snapshot_hash, row.expected))
    return SplitRows(rows, rejected, table)


def split_rows(calibration: Path, split: str) -> list[tuple[str, str]]:
    """``(snapshot_hash, expected)`` of every trusted, labelled row of ``split`` in a file
    (see :func:`read_split`)."""
    return read_split(calibration, split).rows


@dataclass(frozen=True, slots=True)
class CertificateProblem:
    """Why a file is not a usable certificate (``certificate-invalid``)."""

    message: str
    line: int | None = None


def read_certificate(path: Path) -> dict[str, Any] | CertificateProblem:
    """The certificate at ``path``, validated against its schema; or what is wrong with it."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_CERTIFICATE_BYTES + 1)
    except OSError as exc:
        return CertificateProblem(f"cannot read the certificate: {exc.strerror or exc}")
    if len(data) > MAX_CERTIFICATE_BYTES:
        return CertificateProblem(f"the file is over {MAX_CERTIFICATE_BYTES} bytes, far "
                                  "larger than a certificate")
    try:
        certificate = strictjson.loads(data)
    except UnicodeDecodeError:
        return CertificateProblem("the file is not UTF-8 text")
    except json.JSONDecodeError as exc:
        return CertificateProblem(f"not valid JSON: {exc.msg}", exc.lineno)
    except (ValueError, RecursionError) as exc:  # a repeated key, NaN, too deep
        return CertificateProblem(f"not valid JSON: {exc}")
    problem = _schema_problem(certificate)
    if problem is not None:
        return problem
    return certificate  # type: ignore[no-any-return]


def _schema_problem(certificate: object) -> CertificateProblem | None:
    from introspection_cli.recipe.minischema import Validator
    from introspection_cli.resources import load_schema

    errors = sorted(Validator(load_schema(SCHEMA_NAME)).iter_errors(certificate),
                    key=lambda e: (len(e.absolute_path), [str(p) for p in e.absolute_path]))
    if errors:
        first = errors[0]
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first.absolute_path)
        return CertificateProblem(f"at ${where}: {first.message}")
    assert isinstance(certificate, dict)  # the schema's type: object held
    for rate in ("tpr", "tnr"):
        low = certificate[rate]["low"]
        if low < certificate["bar"]:
            return CertificateProblem(f"its {rate} lower bound {low:.3f} is below its own bar "
                                      f"{certificate['bar']:g}: it certifies nothing")
    return None


def write_certificate(path: Path, certificate: dict[str, Any]) -> None:
    """Write ``certificate`` atomically (a temporary file in ``judges/``, then a rename)."""
    atomic_write_text(path, json.dumps(certificate, indent=2, ensure_ascii=False) + "\n")
