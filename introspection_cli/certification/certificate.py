"""The certificate file ``judges/<name>.certificate.json``: its value, digest, reading, writing.

A certificate says: this judge version (fingerprint), run this way (samples,
provider, model), gave these outcomes on these rows (``outcomes``,
``rows_digest``), whose counts against the human labels (``confusion``) put the
lower bounds of its TPR and TNR at or above the bar, at this level (``alpha``),
and its test rows had been exposed this much (``exposure``). Every figure in it
follows from the outcomes and the labels, so ``check`` recomputes them
(:mod:`.validator`) and decides whether it still holds (:mod:`.state`), without
any model call. Standard library only (the schema is checked with the small
validator ``check`` uses).

Version 1 certificates (no outcomes, no exposure) are still read: they can
only be reported stale.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from introspection_cli import strictjson
from introspection_cli.certification.exposure import Exposure, pairs_digest
from introspection_cli.certification.raters import RatersRecord
from introspection_cli.fsutil import atomic_write_text

CERTIFICATE_VERSION = 2
CERTIFICATE_SUFFIX = ".certificate.json"
#: The schema of each version read (schemas/<name>.schema.json).
SCHEMAS = {1: "certificate-v1", 2: "certificate"}
#: A certificate lists every row it used; anything larger is not one (and is not read).
MAX_CERTIFICATE_BYTES = 16 << 20
OUTCOMES = ("pass", "fail", "not_applicable", "gated", "error")
LABELS = ("pass", "fail", "not_applicable")


def certificate_path(judges_dir: Path, judge: str) -> Path:
    """Where ``judge``'s certificate lives: beside its judge file."""
    return judges_dir / f"{judge}{CERTIFICATE_SUFFIX}"


def rows_digest(rows: Iterable[tuple[str, str]]) -> str:
    """``sha256:`` of the sorted lines ``snapshot_hash + " " + expected``, each ending in ``\\n``.

    ``rows`` are ``(snapshot_hash, expected)`` of the labelled rows used. Any
    relabelled, added, removed or re-exported row changes it; the order of the
    rows in the file and their other fields (the split aside) do not.
    """
    return pairs_digest(rows)


@dataclass(frozen=True, slots=True)
class LabelledRow:
    """A trusted, labelled calibration row, as a certificate rests on it."""

    conversation_id: str
    snapshot_hash: str
    expected: str


@dataclass(frozen=True, slots=True)
class SplitRows:
    """One pass over a calibration file: what a certificate of one split rests on."""

    #: Every trusted, labelled row of the split, in file order.
    rows: list[LabelledRow]
    #: ``(line, code, message)`` of every row of the file the fixture rules reject
    #: (blank lines and unlabelled rows are not rejections here).
    rejected: list[tuple[int, str, str]]
    #: split (``unsplit`` for none) -> label -> trusted labelled rows, over the whole file.
    table: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def digest(self) -> str:
        return rows_digest((row.snapshot_hash, row.expected) for row in self.rows)


def read_split(calibration: Path, split: str) -> SplitRows:
    """The split's trusted labelled rows, and every rejected row of the whole file.

    Trusted means the row passes every fixture rule (a rejected row is never
    used, by certify or by eval). A rejected row's split cannot be trusted
    either, so it is reported whatever split it claims. Raises
    :class:`~introspection_cli.errors.DataError` when the file cannot be read.
    """
    from introspection_cli.fixture import WARNING_CODES, verify_calibration_file

    rows: list[LabelledRow] = []
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
            rows.append(LabelledRow(row.conversation_id, row.snapshot_hash, row.expected))
    return SplitRows(rows, rejected, table)


@dataclass(frozen=True, slots=True)
class RateRecord:
    """A certificate's ``{"value", "low", "high", "n"}``."""

    value: float
    low: float
    high: float
    n: int

    def as_json(self) -> dict[str, Any]:
        return {"value": self.value, "low": self.low, "high": self.high, "n": self.n}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> RateRecord | None:
        return None if data is None else cls(data["value"], data["low"], data["high"],
                                             data["n"])


@dataclass(frozen=True, slots=True)
class FamilyWise:
    """The family a judge was certified in (``certify --all --family-wise``)."""

    method: str  # "holm" | "bonferroni"
    judges: int
    alpha: float

    def as_json(self) -> dict[str, Any]:
        return {"method": self.method, "judges": self.judges, "alpha": self.alpha}


@dataclass(frozen=True, slots=True)
class Sequential:
    """How the bounds were computed over the looks under one procedure. ``wilson``: the
    Wilson bound; another method is an anytime-valid bound (with its parameters)."""

    looks: int
    method: str = "wilson"
    parameters: Mapping[str, Any] | None = None

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"looks": self.looks, "method": self.method}
        if self.parameters is not None:
            data["parameters"] = dict(self.parameters)
        return data


@dataclass(frozen=True)
class Certificate:
    """A version 2 certificate (``schemas/certificate.schema.json``)."""

    judge: str
    fingerprint: str
    components: Mapping[str, str]
    provider: str
    model: str
    temperature: float | None
    max_output_tokens: int | None
    split: str
    bar: float
    bar_na: float | None
    max_error_rate: float
    alpha: float
    family_wise: FamilyWise | None
    samples: int
    rows_digest: str
    n: int
    tpr: RateRecord
    tnr: RateRecord
    na_recall: RateRecord | None
    errors: int
    #: label -> outcome -> rows used.
    confusion: Mapping[str, Mapping[str, int]]
    #: (conversation_id, outcome) of every row used, in file order.
    outcomes: tuple[tuple[str, str], ...]
    exposure: Exposure
    accepted_exposure: str | None
    sequential: Sequential
    tool_version: str
    certified_at: str
    #: With an annotations file: the rows in conflict left out, the raters' alpha required.
    raters: RatersRecord | None = None

    def as_json(self) -> dict[str, Any]:
        data = {
            "certificate_version": CERTIFICATE_VERSION, "judge": self.judge,
            "fingerprint": self.fingerprint, "components": dict(self.components),
            "provider": self.provider, "model": self.model, "temperature": self.temperature,
            "max_output_tokens": self.max_output_tokens, "split": self.split,
            "bar": self.bar, "bar_na": self.bar_na, "max_error_rate": self.max_error_rate,
            "alpha": self.alpha,
            "family_wise": None if self.family_wise is None else self.family_wise.as_json(),
            "samples": self.samples, "rows_digest": self.rows_digest, "n": self.n,
            "tpr": self.tpr.as_json(), "tnr": self.tnr.as_json(),
            "na_recall": None if self.na_recall is None else self.na_recall.as_json(),
            "errors": self.errors,
            "confusion": {label: dict(row) for label, row in self.confusion.items()},
            "outcomes": [list(pair) for pair in self.outcomes],
            "exposure": self.exposure.as_json(), "accepted_exposure": self.accepted_exposure,
            "sequential": self.sequential.as_json(), "tool_version": self.tool_version,
            "certified_at": self.certified_at,
        }
        if self.raters is not None:  # an optional member: certificates without raters as before
            data["raters"] = self.raters.as_json()
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Certificate:
        """The certificate a schema-valid version 2 object holds."""
        family, sequential = data["family_wise"], data["sequential"]
        tpr, tnr = RateRecord.from_json(data["tpr"]), RateRecord.from_json(data["tnr"])
        assert tpr is not None and tnr is not None  # the schema requires both
        return cls(
            data["judge"], data["fingerprint"], dict(data["components"]), data["provider"],
            data["model"], data["temperature"], data["max_output_tokens"], data["split"],
            data["bar"], data["bar_na"], data["max_error_rate"], data["alpha"],
            None if family is None else FamilyWise(family["method"], family["judges"],
                                                   family["alpha"]),
            data["samples"], data["rows_digest"], data["n"], tpr, tnr,
            RateRecord.from_json(data["na_recall"]), data["errors"],
            {label: dict(row) for label, row in data["confusion"].items()},
            tuple((cid, outcome) for cid, outcome in data["outcomes"]),
            Exposure.from_json(data["exposure"]), data["accepted_exposure"],
            Sequential(sequential["looks"], sequential["method"],
                       sequential.get("parameters")),
            data["tool_version"], data["certified_at"], RatersRecord.from_json(data.get("raters")))


@dataclass(frozen=True)
class LegacyCertificate:
    """A version 1 certificate, schema-valid: what is left of it to check (its own
    figures) before it is reported stale."""

    data: Mapping[str, Any]

    @property
    def judge(self) -> str:
        return str(self.data["judge"])


@dataclass(frozen=True, slots=True)
class CertificateProblem:
    """Why a file is not a usable certificate (``certificate-invalid``)."""

    message: str
    line: int | None = None


def read_certificate(path: Path) -> Certificate | LegacyCertificate | CertificateProblem:
    """The certificate at ``path``, validated against its version's schema; or what is
    wrong with it."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_CERTIFICATE_BYTES + 1)
    except OSError as exc:
        return CertificateProblem(f"cannot read the certificate: {exc.strerror or exc}")
    if len(data) > MAX_CERTIFICATE_BYTES:
        return CertificateProblem(f"the file is over {MAX_CERTIFICATE_BYTES >> 20} MiB, far "
                                  "larger than a certificate")
    try:
        document = strictjson.loads(data)
    except UnicodeDecodeError:
        return CertificateProblem("the file is not UTF-8 text")
    except json.JSONDecodeError as exc:
        return CertificateProblem(f"not valid JSON: {exc.msg}", exc.lineno)
    except (ValueError, RecursionError) as exc:  # a repeated key, NaN, too deep
        return CertificateProblem(f"not valid JSON: {exc}")
    version = document.get("certificate_version") if isinstance(document, dict) else None
    schema = SCHEMAS.get(version, SCHEMAS[CERTIFICATE_VERSION]) if isinstance(version, int) \
        else SCHEMAS[CERTIFICATE_VERSION]
    problem = _schema_problem(document, schema)
    if problem is not None:
        return problem
    if version == 1:
        return LegacyCertificate(document)
    return Certificate.from_json(document)


def _schema_problem(document: object, schema: str) -> CertificateProblem | None:
    from introspection_cli.minischema import Validator
    from introspection_cli.resources import load_schema

    # The object with its first outcome is checked against the schema (the contract);
    # the outcomes, all of one shape, by _outcomes_problem: the same check, and cheaper
    # than the schema's on a certificate of thousands of rows.
    outcomes = document.get("outcomes") if isinstance(document, dict) else None
    sample = {**document, "outcomes": outcomes[:1]} \
        if isinstance(document, dict) and isinstance(outcomes, list) else document
    errors = sorted(Validator(load_schema(schema)).iter_errors(sample),
                    key=lambda e: (len(e.absolute_path), [str(p) for p in e.absolute_path]))
    if errors:
        first = errors[0]
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first.absolute_path)
        return CertificateProblem(f"at ${where}: {first.message}")
    return _outcomes_problem(outcomes) if isinstance(outcomes, list) else None


def _outcomes_problem(outcomes: list[Any]) -> CertificateProblem | None:
    for index, pair in enumerate(outcomes):
        if not (isinstance(pair, list) and len(pair) == 2
                and all(isinstance(v, str) and v for v in pair)):
            return CertificateProblem(f"at $.outcomes[{index}]: an outcome is "
                                      "[conversation_id, outcome]")
    return None


def certificate_text(certificate: Certificate) -> str:
    """The file's text: indented JSON, each of the per-row outcomes on one line."""
    data = certificate.as_json()
    outcomes = data.pop("outcomes")
    marker = '"outcomes": "<outcomes>"'
    text = json.dumps({**data, "outcomes": "<outcomes>"}, indent=2, ensure_ascii=False)
    rows = ",\n    ".join(json.dumps(pair, ensure_ascii=False) for pair in outcomes)
    return text.replace(marker, f'"outcomes": [\n    {rows}\n  ]') + "\n"


def write_certificate(path: Path, certificate: Certificate) -> None:
    """Write ``certificate`` atomically (a temporary file in ``judges/``, then a rename)."""
    atomic_write_text(path, certificate_text(certificate))
