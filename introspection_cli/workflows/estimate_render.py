"""``judges estimate``'s text output (its JSON is the payload itself)."""

from __future__ import annotations

from typing import Any

_OUTCOMES = ("pass", "fail", "not_applicable", "gated", "error")


def render_correction(payload: dict[str, Any], *, gated_judge: bool) -> str:
    """The corrected pass rate as text: the calibration, production, θ and φ, the caveats."""
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
