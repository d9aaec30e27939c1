"""``judges agree``'s text: alpha with its interval, each pair of raters, per-class
agreement and the rows in conflict (its JSON is the document itself)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def agreement_text(document: Mapping[str, Any]) -> str:
    """``judges agree``'s text output."""
    alpha = document["alpha"]
    lines = [f"judge {document['judge']}: {len(document['raters'])} raters "
             f"({', '.join(document['raters'])}) on {document['units']} rows, "
             f"{document['pairable']} labelled by two or more",
             f"  Krippendorff's alpha (nominal)  {alpha['value']:.3f} (95% interval "
             f"{alpha['low']:.3f}–{alpha['high']:.3f}, bootstrap over rows, "
             f"{alpha['draws']} draws)",
             "  per pair of raters:"]
    for pair in document["pairs"]:
        lines.append(f"    {' – '.join(pair['raters']):<24} {_pair_text(pair)}")
    classes = ", ".join(f"{c['label']} {c['value']:.3f}" if c["value"] is not None
                        else f"{c['label']} —" for c in document["classes"])
    lines.append(f"  per-class agreement (pairs of labels on a row that agree): {classes}")
    lines += _conflicts_text(document)
    return "\n".join(lines) + "\n"


def _pair_text(pair: Mapping[str, Any]) -> str:
    if not pair["n"]:
        return "no row labelled by both"
    kappa = f"kappa {pair['kappa']:.3f}" if pair["kappa"] is not None else \
        f"kappa — ({pair['kappa_problem']})"
    applicable = pair["applicable_agreement"]
    agreement = "applicable agreement —" if applicable is None else (
        f"applicable agreement {applicable['value']:.3f} ({applicable['low']:.3f}–"
        f"{applicable['high']:.3f}) over {applicable['n']}")
    return f"{kappa} over {pair['n']} rows; {agreement}"


def _conflicts_text(document: Mapping[str, Any]) -> list[str]:
    conflicts = document["conflicts"]
    lines = []
    if conflicts:
        lines.append(f"  rows in conflict ({len(conflicts)}): settle them with `introspection "
                     f"judges label --adjudicate --judge {document['judge']}`")
        lines += [f"    line {c['line']} {c['conversation_id']}: {c['described']}"
                  for c in conflicts]
    else:
        lines.append("  rows in conflict: none")
    if document["adjudicated"]:
        lines.append(f"  {document['adjudicated']} row(s) adjudicated")
    if document["orphans"]:
        lines.append(f"  {document['orphans']} annotation(s) of conversations the calibration "
                     "file no longer holds with that text are left out (`introspection "
                     "check` lists them)")
    return lines
