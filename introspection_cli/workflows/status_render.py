"""Reporters for ``introspection judges status``: text and JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from introspection_cli.certification.power import describe_plan
from introspection_cli.certification.state import describe_change
from introspection_cli.reporting.status_values import (
    LABELS,
    PLANNED,
    SPLIT_ROWS,
    JudgeStatus,
    rate_sources,
)
from introspection_cli.statistics import Interval


def _interval(interval: Interval | None, n: int) -> dict[str, Any] | None:
    return None if interval is None else {**interval.as_json(), "n": n}


def status_json(recipe: str, statuses: Sequence[JudgeStatus]) -> dict[str, Any]:
    """The JSON object ``--format json`` prints."""
    return {"recipe": recipe, "judges": [_judge_json(status) for status in statuses]}


def _judge_json(status: JudgeStatus) -> dict[str, Any]:
    counts, certificate, plan, dev = status.counts, status.certificate, status.plan, status.dev
    return {
        "name": status.name,
        "calibration": str(status.calibration),
        "fingerprint": status.fingerprint,
        "rows": counts.rows,
        "rejected": {"rows": counts.rejected_rows,
                     "by_code": dict(sorted(counts.rejected.items()))},
        "labelled": {label: counts.labelled(label) for label in LABELS[:3]},
        "unlabelled": counts.labelled("unlabelled"),
        "gate_misses": counts.gate_misses,
        "gate_errors": counts.gate_errors,
        "splits": {split: {label: counts.table[split][label] for label in LABELS}
                   for split in SPLIT_ROWS},
        "certificate": {"state": certificate.state, "path": str(certificate.path),
                        "changed": list(certificate.changed), "problem": certificate.problem},
        "test_fingerprints_seen": status.test_fingerprints,
        "exposure": None if status.exposure is None else {
            **status.exposure.as_json(), "clean": status.exposure.clean},
        "exposure_problem": status.exposure_problem,
        "dev": None if dev is None else {
            "tpr": _interval(dev.tpr, dev.pass_rows), "tnr": _interval(dev.tnr, dev.fail_rows),
            "evaluated": dev.evaluated, "labelled": dev.labelled},
        "plan": {"bar": plan.bar, "rows_per_class": plan.floor,
                 "perfect": dict(plan.perfect),
                 "power": {**plan.power.as_json(), "assumed": list(plan.assumed)},
                 "never": list(plan.never)},
    }


def render_status_json(recipe: str, statuses: Sequence[JudgeStatus]) -> str:
    return json.dumps(status_json(recipe, statuses), indent=2, ensure_ascii=False) + "\n"


def render_status_text(recipe: str, statuses: Sequence[JudgeStatus]) -> str:
    lines = [f"recipe {recipe}"]
    for status in statuses:
        lines += ["", *_judge_lines(status)]
    return "\n".join(lines) + "\n"


def _judge_lines(status: JudgeStatus) -> list[str]:
    counts = status.counts
    labelled = sum(counts.labelled(label) for label in LABELS[:3])
    by_label = ", ".join(f"{counts.labelled(label)} {label}" for label in LABELS[:3])
    rejected = (f", {counts.rejected_rows} rejected ("
                + ", ".join(f"{code} {n}" for code, n in sorted(counts.rejected.items())) + ")"
                if counts.rejected_rows else "")
    lines = [f"judge {status.name} ({status.calibration})",
             f"  fingerprint {status.fingerprint}",
             f"  rows        {counts.rows}: {labelled} labelled ({by_label}), "
             f"{counts.labelled('unlabelled')} unlabelled{rejected}"]
    if counts.gate_misses is not None:
        errors = f"; {counts.gate_errors} timed out" if counts.gate_errors else ""
        lines.append(f"  gate        {counts.gate_misses} row(s) its gate does not match{errors}")
    lines += _table(counts.table)
    lines.append(f"  certificate {_certificate(status)}")
    lines.append(f"  exposure    {_exposure(status)}")
    lines += _plan_lines(status)
    return lines


def _exposure(status: JudgeStatus) -> str:
    """What the exposure file says of the rows now in test."""
    exposure = status.exposure
    if exposure is None:
        return f"unknown: {status.exposure_problem}"
    if exposure.looks == 0:
        return "the rows now in test have never been evaluated (fresh)"
    seen = (f"{exposure.looks} look(s) at the rows now in test by {exposure.procedures} "
            f"procedure(s), {exposure.fingerprints} judge version(s)")
    if exposure.clean:
        return f"{seen}: clean"
    return (f"{seen}: not clean: " + "; ".join(exposure.problems())
            + " (its test figures are optimistic: label fresh test rows)")


def _table(table: dict[str, Any]) -> list[str]:
    header = ["split", *LABELS]
    rows = [[split, *(str(table[split][label]) for label in LABELS)] for split in SPLIT_ROWS]
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]
    return ["    " + "  ".join([r[0].ljust(widths[0]),
                                *(c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True))])
            for r in (header, *rows)]


def _certificate(status: JudgeStatus) -> str:
    state = status.certificate
    certificate = state.certificate
    if state.state == "valid" and certificate is not None:
        accepted = (f"; its exposure was accepted: {certificate.accepted_exposure}"
                    if certificate.accepted_exposure else "")
        return (f"valid: certified {certificate.certified_at} on split {certificate.split} at "
                f"bar {certificate.bar:g}{accepted}")
    if state.state == "stale":
        return f"stale: {describe_change(state)}"
    if state.state == "invalid":
        return f"invalid: {state.problem}"
    return "none"


def _plan_lines(status: JudgeStatus) -> list[str]:
    plan, dev = status.plan, status.dev
    perfect = " and ".join(f"{plan.perfect[label]} more {label}" for label in PLANNED)
    lines = [f"  plan        bar {plan.bar:g} ({plan.floor} rows of each class at the least): "
             f"a judge that agrees on every row needs {perfect} labelled test rows"]
    if dev is None:
        lines.append("              no dev figures for this version yet (run judges eval on "
                     "the dev split); planned at an assumed "
                     f"{plan.power.classes['pass'].rate:.2f}")
    else:
        lines.append(f"              dev figures from {dev.evaluated} of {dev.labelled} "
                     "labelled dev rows evaluated under this fingerprint")
    return lines + [f"              {line}" for line in describe_plan(
        plan.power, rate_sources(status.dev, plan))]
