"""A certificate is a checked claim: everything it states that follows is recomputed.

From the certificate alone (:func:`intrinsic_problem`): each rate from its
confusion counts, each bound from the rate and n at the recorded level and
method, ``low <= value <= high``, ``errors <= n``, the decision itself (both
bounds at the bar, na_recall at ``bar_na``, errors within the ceiling), the bar
at least the floor CI asks for (0.80 unless ``--min-bar``), and the provider,
model and parameters against the fingerprint's ``llm`` component, and its
``raters`` (no row both excluded and scored, the raters' alpha at its own bar). Against the
repository: the per-row outcomes, with the calibration file's labels, give
the confusion counts (:func:`outcomes_problem`), and the certifying run is in
the exposure file with the exposure recorded (:func:`exposure_check`).

``check``, ``judges status`` and ``judges estimate`` all go through here (via
:func:`.state.assess_certificate`). What this proves and what it does not: the
certificate is the recorded run, unchanged, and it is consistent with the
repository; a committer who forges the outcomes, the labels and the exposure
file together is not caught here, only in review and by ``judges certify
--verify``, which runs the judge again.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from typing import Any

from introspection_cli.certification.bounds import METHODS, BoundMethod, method_for
from introspection_cli.certification.certificate import (
    LABELS,
    OUTCOMES,
    Certificate,
    LabelledRow,
    RateRecord,
    Sequential,
)
from introspection_cli.certification.decision import DEFAULT_ALPHA, z_for
from introspection_cli.certification.exposure import (
    Look,
    derive_exposure,
    looks_under,
    outcomes_digest,
)
from introspection_cli.statistics import wilson_interval

#: The bar ``check --require-certified`` (and every reader) asks for unless ``--min-bar``.
MIN_BAR = 0.8
#: The error ceiling ``check --require-certified`` accepts a certificate made with (certify's
#: default): a looser ``--max-error-rate`` certifies a judge on the rows it happened to answer.
MAX_ERROR_RATE = 0.05
#: How far a recomputed figure may be from the recorded one: rounding, never a real change.
_TOLERANCE = 1e-9

#: method -> how a certificate's bounds are recomputed: ``wilson`` (one look) and the
#: anytime-valid ``beta-binomial`` (after earlier looks under the same procedure).
BOUNDS: Mapping[str, BoundMethod] = METHODS

#: rate -> (its label, the outcomes that agree with it).
_RATES: Mapping[str, tuple[str, tuple[str, ...]]] = {
    "tpr": ("pass", ("pass",)), "tnr": ("fail", ("fail",)),
    "na_recall": ("not_applicable", ("not_applicable", "gated"))}


def intrinsic_problem(certificate: Certificate, *, min_bar: float = MIN_BAR) -> str | None:
    """What in the certificate does not follow from the rest of it, or None."""
    for check in (_level_problem, _counts_problem, _rates_problem, _decision_problem,
                  _raters_check):
        problem = check(certificate, min_bar)
        if problem is not None:
            return problem
    return None


def _level_problem(certificate: Certificate, min_bar: float) -> str | None:
    if not 0 < certificate.bar < 1:
        return f"its bar {certificate.bar:g} is no bar: it must be above 0 and below 1"
    if certificate.bar < min_bar:
        return (f"it was certified at bar {certificate.bar:g}, below the {min_bar:g} a "
                f"certificate must reach (check --min-bar {certificate.bar:g} accepts it)")
    if not 0 < certificate.alpha < 0.5:
        return f"its level alpha {certificate.alpha:g} is not a one-sided level in (0, 0.5)"
    family = certificate.family_wise
    if family is not None and certificate.alpha > family.alpha + _TOLERANCE:
        return (f"its level alpha {certificate.alpha:g} is above its family's "
                f"{family.alpha:g}: a family-wise test never loosens a judge's level")
    problem = _sequential_problem(certificate.sequential, certificate.split)
    if problem is not None:
        return problem
    exposure = certificate.exposure
    if exposure.looks < exposure.procedures or (
            certificate.split == "test" and certificate.sequential.looks > exposure.looks):
        return (f"its exposure counts do not add up ({exposure.procedures} procedure(s), "
                f"{exposure.looks} look(s), {certificate.sequential.looks} under its own)")
    return None


def _sequential_problem(sequential: Sequential, split: str) -> str | None:
    """Whether the bound it names is known, has its own parameters, and is the one its
    looks call for: Wilson for a first look, the anytime-valid bound after earlier ones."""
    method = BOUNDS.get(sequential.method)
    if method is None:
        return (f"its bounds were computed by method {sequential.method!r}, which this "
                "version of introspection does not know: upgrade it, or certify again")
    if (dict(sequential.parameters) if sequential.parameters is not None else None) != (
            dict(method.parameters) if method.parameters is not None else None):
        return (f"its {method.name} bounds name parameters {sequential.parameters!r}, not "
                f"the method's own ({method.parameters!r})")
    looks = sequential.looks if split == "test" else 1
    expected = method_for(looks)
    if expected is not method:
        return (f"its bounds are {method.name} bounds after {sequential.looks} look(s) at its "
                f"rows under its procedure, where {expected.name} bounds are the valid ones: "
                "after earlier looks only an anytime-valid bound keeps the level")
    return None


def _counts_problem(certificate: Certificate, _: float) -> str | None:
    if certificate.errors > certificate.n:
        return f"it counts {certificate.errors} error rows among only {certificate.n} rows"
    if len(certificate.outcomes) != certificate.n:
        return (f"it lists {len(certificate.outcomes)} per-row outcomes for n = "
                f"{certificate.n} rows")
    ids = [cid for cid, _ in certificate.outcomes]
    if len(set(ids)) != len(ids):
        return "a conversation appears twice among its per-row outcomes"
    unknown = sorted({outcome for _, outcome in certificate.outcomes} - set(OUTCOMES))
    if unknown:
        return f"{unknown[0]!r} is not an outcome ({', '.join(OUTCOMES)})"
    confusion = certificate.confusion
    total = sum(sum(row.values()) for row in confusion.values())
    if total != certificate.n:
        return f"its confusion counts {total} rows, not n = {certificate.n}"
    errors = sum(row["error"] for row in confusion.values())
    if errors != certificate.errors:
        return f"its confusion counts {errors} error rows, not the {certificate.errors} stated"
    return None


def _rates_problem(certificate: Certificate, _: float) -> str | None:
    for name, (label, agreeing) in _RATES.items():
        record: RateRecord | None = getattr(certificate, name)
        row = certificate.confusion[label]
        n = sum(row.values()) - row["error"]
        successes = sum(row[outcome] for outcome in agreeing)
        problem = _rate_problem(name, record, successes, n, certificate)
        if problem is not None:
            return problem
    return None


def _rate_problem(name: str, record: RateRecord | None, successes: int, n: int,
                  certificate: Certificate) -> str | None:
    if record is None and n == 0:
        return None
    if record is None or n == 0:
        return (f"its {name} is {'null' if record is None else 'stated'} but its confusion has "
                f"{n} scorable row(s) of that label")
    if not record.low <= record.value <= record.high:
        return (f"its {name} interval {record.low:.3f}–{record.high:.3f} does not hold its "
                f"value {record.value:.3f} (low <= value <= high)")
    if record.n != n or not math.isclose(record.value, successes / n, abs_tol=_TOLERANCE):
        return (f"its {name} {record.value:.3f} over {record.n} rows does not follow from its "
                f"confusion ({successes} of {n})")
    method = BOUNDS[certificate.sequential.method]
    bound = method.interval(successes, n, certificate.alpha)
    assert bound is not None  # n >= 1
    if not (math.isclose(record.low, bound.low, abs_tol=_TOLERANCE)
            and math.isclose(record.high, bound.high, abs_tol=_TOLERANCE)):
        return (f"its {name} bounds {record.low:.3f}–{record.high:.3f} do not follow from "
                f"{successes} of {n} (the {method.interval_name(certificate.alpha)} is "
                f"{bound.low:.3f}–{bound.high:.3f})")
    return None


def _decision_problem(certificate: Certificate, _: float) -> str | None:
    for name in ("tpr", "tnr"):
        low = getattr(certificate, name).low
        if low < certificate.bar:
            return (f"its {name} lower bound {low:.3f} is below its own bar "
                    f"{certificate.bar:g}: it certifies nothing")
    na_recall, bar_na = certificate.na_recall, certificate.bar_na
    if bar_na is not None and (na_recall is None or na_recall.low < bar_na):
        return f"its na_recall does not reach its own --bar-na {bar_na:g}: it certifies nothing"
    if certificate.errors > certificate.max_error_rate * certificate.n + _TOLERANCE:
        return (f"{certificate.errors} of its {certificate.n} rows are errors, above its own "
                f"--max-error-rate {certificate.max_error_rate:g}: it certifies nothing")
    return None


def _raters_check(certificate: Certificate, _: float) -> str | None:
    from introspection_cli.certification.raters import raters_problem

    return raters_problem(certificate.raters, [cid for cid, _ in certificate.outcomes])


def llm_problem(certificate: Certificate) -> str | None:
    """The provider, model and parameters it names against its fingerprint's llm part."""
    from introspection_cli.fixture.canonical import canonical_json

    llm = {"provider": certificate.provider, "model": certificate.model,
           "temperature": certificate.temperature,
           "max_output_tokens": certificate.max_output_tokens}
    digest = "sha256:" + hashlib.sha256(canonical_json(llm)).hexdigest()
    if digest == certificate.components["llm"]:
        return None
    return (f"the provider, model and parameters it names ({certificate.provider}/"
            f"{certificate.model}) are not the ones its fingerprint was made from")


def outcomes_problem(certificate: Certificate, rows: Sequence[LabelledRow]) -> str | None:
    """Whether the per-row outcomes, with the split's current labels, give its counts.

    Only meaningful when the split's rows are the certified ones (``rows_digest``)."""
    labels = {row.conversation_id: row.expected for row in rows}
    listed = {cid for cid, _ in certificate.outcomes}
    if listed != labels.keys():
        missing = sorted(labels.keys() - listed)[:3] or sorted(listed - labels.keys())[:3]
        return (f"its per-row outcomes are not the rows of split {certificate.split} "
                f"(e.g. {', '.join(missing)})")
    confusion = {label: dict.fromkeys(OUTCOMES, 0) for label in LABELS}
    for cid, outcome in certificate.outcomes:
        confusion[labels[cid]][outcome] += 1
    for label in LABELS:
        if confusion[label] != dict(certificate.confusion[label]):
            return (f"its per-row outcomes and the calibration file's labels do not give its "
                    f"counts: rows labelled {label} were judged {_counts(confusion[label])}, "
                    f"it states {_counts(certificate.confusion[label])}")
    return None


def _counts(row: Mapping[str, int]) -> str:
    return ", ".join(f"{count} {outcome}" for outcome, count in row.items() if count) or "none"


def certifying_looks(certificate: Certificate, looks: Sequence[Look]) -> list[int]:
    """The indexes of the looks that may have made the certificate: its time, procedure
    and outcomes (several when runs of the same rows fell in the same second)."""
    digest = outcomes_digest((cid, outcome) for cid, outcome in certificate.outcomes
                             if outcome != "error")
    wanted = (certificate.certified_at, certificate.fingerprint, certificate.samples, digest)
    return [index for index, look in enumerate(looks)
            if (look.at, look.fingerprint, look.samples, look.outcomes_digest) == wanted]


def exposure_check(certificate: Certificate, looks: Sequence[Look],
                   rows: Sequence[LabelledRow]) -> tuple[str | None, bool]:
    """(why it is invalid, or None; whether the exposure file now says otherwise than the
    certificate about the time it was issued). For a certificate of the test split whose
    rows are the certified ones."""
    candidates = certifying_looks(certificate, looks)
    if not candidates:
        return ("the run that made it is not in the judge's exposure file (was the file "
                "edited, or the certificate written by hand?)"), False
    test_rows = {row.conversation_id: (row.snapshot_hash, row.expected) for row in rows}
    procedure = (certificate.fingerprint, certificate.samples)
    latest = {cid: outcome for cid, outcome in certificate.outcomes if outcome != "error"}
    for index in candidates:
        before = looks[:index + 1]
        exposure = derive_exposure(before, test_rows, latest=latest)
        if exposure.same_record(certificate.exposure) and \
                looks_under(before, procedure, test_rows) == certificate.sequential.looks:
            return None, False
    return None, True


def legacy_problem(data: Mapping[str, Any]) -> str | None:
    """A version 1 certificate's own figures: each bound from its value and n at 95%, its
    bar, its error count."""
    if data["errors"] > data["n"]:
        return f"it counts {data['errors']} error rows among only {data['n']} rows"
    for name in ("tpr", "tnr"):
        rate = data[name]
        if rate["low"] < data["bar"]:
            return (f"its {name} lower bound {rate['low']:.3f} is below its own bar "
                    f"{data['bar']:g}: it certifies nothing")
        if not rate["low"] <= rate["value"] <= rate["high"]:
            return f"its {name} interval does not hold its value (low <= value <= high)"
        successes = round(rate["value"] * rate["n"])
        bound = wilson_interval(successes, rate["n"], z_for(DEFAULT_ALPHA))
        assert bound is not None  # n >= 1 by the schema
        if not (math.isclose(successes / rate["n"], rate["value"], abs_tol=_TOLERANCE)
                and abs(bound.low - rate["low"]) < 5e-4 and abs(bound.high - rate["high"]) < 5e-4):
            return (f"its {name} {rate['value']:.3f} ({rate['low']:.3f}–{rate['high']:.3f}) over "
                    f"{rate['n']} rows is no Wilson 95% interval of a count")
    return None

