"""``judges status``'s text: per judge, its rows by label and split, its gate, certificate,
exposure and plan (its JSON is the report's document)."""

from __future__ import annotations

from typing import Any

from introspection_cli.certification.power import describe_plan
from introspection_cli.certification.state import describe_change
from introspection_cli.reporting.status_values import (
    LABELS,
    PLANNED,
    SPLIT_ROWS,
    JudgeStatus,
    StatusReport,
    rate_sources,
)


def status_text(report: StatusReport) -> str:
    """The recipe, then each judge: its rows, splits, certificate, exposure and plan."""
    lines = [f"recipe {report.recipe}"]
    for status in report.judges:
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
