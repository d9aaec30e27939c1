"""``judges estimate``'s text: the corrected rate, or the PPI++ estimate of a random design
(their JSON is the payload itself)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from introspection_cli.reporting.outputs import EstimateOutput

_OUTCOMES = ("pass", "fail", "not_applicable", "gated", "error")


def correction_text(output: EstimateOutput) -> str:
    """The corrected pass rate as text: the calibration, production, θ and φ, the caveats."""
    payload, gated_judge = output.payload, output.gated_judge
    calibration, observed, corrected = (payload["calibration"], payload["observed"],
                                        payload["corrected"])
    lines = [f"judge {payload['judge']}", f"  fingerprint {payload['fingerprint']}",
             f"  calibration {_where(calibration)}: {_rate(calibration['tpr'], 'TPR', 'pass')}"
             f", {_rate(calibration['tnr'], 'TNR', 'fail')}"]
    if payload["not_applicable"] is not None or _has_not_applicable(calibration["confusion"]):
        lines.append("  calibration verdicts by label (gate matched): " + "; ".join(
            f"{label} → " + ", ".join(f"{counts[v]} {v}" for v in
                                      ("pass", "fail", "not_applicable"))
            for label, counts in calibration["confusion"].items()))
    if observed["source"] == "rows":
        counts = observed["outcomes"]
        lines.append(f"  rows        {observed['path']}: "
                     + ", ".join(f"{counts[o]} {o}" for o in _OUTCOMES)
                     + (f", {observed['rejected']} rejected" if observed["rejected"] else "")
                     + " (gated and error rows are left out)")
    if observed["rate"] is not None:
        lines.append(f"  observed    {observed['passed']} of {observed['total']} pass "
                     f"({observed['rate']:.3f})"
                     + (f", {observed['not_applicable']} not_applicable"
                        if observed["not_applicable"] else ""))
    gate = payload["gate_misses"]
    if gated_judge and gate["of"]:
        lines.append(f"  gate        misses {gate['rows']} of {gate['of']} calibration rows "
                     f"labelled pass or fail ({gate['share']:.1%}): such conversations are "
                     "outside the corrected rate")
    lines.append(f"corrected pass rate: {_interval(corrected)}")
    if payload["not_applicable"] is not None:
        lines.append(f"not_applicable share: {_interval(payload['not_applicable'])}")
    return "\n".join(lines) + "\n"


def _where(calibration: dict[str, Any]) -> str:
    if calibration["source"] == "certificate":
        return (f"certificate {calibration['path']} (split {calibration['split']}, certified "
                f"{calibration['certified_at']})")
    return f"report {calibration['path']}, split {calibration['split']}"


def _rate(rate: dict[str, Any], name: str, label: str) -> str:
    value = "—" if rate["value"] is None else f"{rate['value']:.3f}"
    return f"{name} {value} over {rate['n']} {label} rows"


def _has_not_applicable(confusion: dict[str, dict[str, int]]) -> bool:
    return any(counts["not_applicable"] for counts in confusion.values()) or any(
        confusion["not_applicable"][v] for v in ("pass", "fail"))


def _interval(interval: dict[str, float]) -> str:
    return (f"{interval['value']:.3f} (95% interval {interval['low']:.3f}–"
            f"{interval['high']:.3f})")


def random_design_text(payload: Mapping[str, Any]) -> str:
    """The PPI++ estimate as text: the rows, the design check, θ beside the labels' own."""
    rows, check = payload["rows"], payload["design_check"]
    lines = [f"judge {payload['judge']}", f"  fingerprint {payload['fingerprint']}",
             f"  rows        {rows['path']}: {_mix(rows['labelled'], 'labelled')}, "
             f"{_mix(rows['unlabelled'], 'unlabelled')}"
             + (f", {rows['rejected']} rejected" if rows["rejected"] else "")]
    if check is not None:
        lines.append(f"  design      the labelled rows' verdict mix is the unlabelled rows' "
                     f"within chance (chi-square p = {check['p_value']:.2g} >= "
                     f"{check['level']}): taken as a random sample")
    lines.append(f"  population  {payload['population']}")
    lines += _ppi_lines(payload, "")
    for segment in payload["segments"] or ():
        lines.append(f"segment {segment['segment']}: {segment['rows']} rows, "
                     f"{segment['labelled']} labelled, weight {segment['weight']:.3f}")
        lines += _ppi_lines(segment, "  ")
    return "\n".join(lines) + "\n"


def _mix(rows: Mapping[str, Any], what: str) -> str:
    counts = rows["outcomes"]
    return f"{rows['rows']} {what} (" + ", ".join(f"{counts[o]} {o}" for o in _OUTCOMES) + ")"


def _ppi_lines(summary: Mapping[str, Any], indent: str) -> list[str]:
    labels_only = summary["labels_only"]
    alone = (f"{indent}labels alone: {_interval(labels_only)} over {labels_only['n']} rows "
             "labelled pass or fail" if labels_only else f"{indent}labels alone: —")
    if summary["estimate"] is None:
        return [f"{indent}pass rate (PPI++): — ({summary['reason']})", alone]
    return [f"{indent}pass rate (PPI++): {_interval(summary['estimate'])}", alone,
            f"{indent}the judge is worth {summary['effective_labels']:.0f} labels (effective "
            "sample size of the labelled rows with its verdicts)"]
