"""What ``judges certify`` prints of one judge: its payload (the JSON output, which the
text of :mod:`introspection_cli.reporting.render_certify` reads) and its plan with power."""

from __future__ import annotations

from typing import Any

from introspection_cli.certification.bounds import BoundMethod, method_for, plan_for
from introspection_cli.certification.decision import CLASSES, Certification, Rate
from introspection_cli.certification.power import (
    ASSUMED_RATE,
    class_mix,
    share_reaching,
    shrunk_rate,
)
from introspection_cli.reporting.outputs import Plan
from introspection_cli.workflows.certify_steps import Candidate


def next_bound(candidate: Candidate) -> BoundMethod:
    """The bound the next certification of these rows will be decided with: after a look
    at them, the anytime-valid one."""
    if candidate.look is None:
        return candidate.bound
    return method_for(candidate.sequential_looks + 1)


def power_plan(decision: Certification, candidate: Candidate, split: str) -> Plan:
    """The plan with power for the split, for the bound the next look will use: at the
    rates this run measured on it, shrunk, or an assumed one before a run; and where each
    rate comes from, in words."""
    rates: dict[str, float] = {}
    sources: dict[str, str] = {}
    for label, name in CLASSES.items():
        rate: Rate | None = getattr(decision, name)
        if rate is None:
            rates[label], sources[label] = ASSUMED_RATE, f"{name.upper()} assumed"
        else:
            rates[label] = shrunk_rate(rate.successes, rate.n)
            sources[label] = (f"{split} {name.upper()} {rate.interval.value:.3f} over "
                              f"{rate.n} rows, shrunk")
    table = candidate.split.table
    plan = plan_for(next_bound(candidate), rates, decision.scorable, bar=decision.bar,
                    alpha=decision.alpha, test_share=share_reaching(table, split),
                    class_mix=class_mix(table))
    return plan, sources


def payload(candidate: Candidate, split: str, samples: int, plan: Plan,
            certificate: str | None) -> dict[str, Any]:
    """The JSON output of one judge: the decision and what it rests on."""
    decision = candidate.final
    ran = candidate.run is not None
    exposure = candidate.exposure
    return {
        "judge": candidate.name,
        "fingerprint": candidate.identity.fingerprint,
        "provider": candidate.provider,
        "model": candidate.model,
        "split": split,
        "bar": decision.bar,
        "bar_na": decision.bar_na,
        "alpha": decision.alpha,
        "family_wise": None if candidate.family is None else candidate.family.as_json(),
        "samples": samples,
        "decision": decision.decision,
        "reasons": list(decision.reasons),
        "rows": decision.rows,
        "labelled": dict(decision.labelled),
        "scorable": dict(decision.scorable),
        "needed": {label: plan[0].classes[label].more for label in CLASSES},
        "needed_perfect": dict(decision.needed_perfect),
        "plan": {**plan[0].as_json(), "sources": plan[1]},
        "errors": decision.errors,
        "max_error_rate": decision.max_error_rate,
        "tpr": _rate(decision.tpr),
        "tnr": _rate(decision.tnr),
        "na_recall": _rate(decision.na_recall),
        # A run whose every test row was an error judged nothing and recorded no look.
        "exposure": {**exposure.as_json(), "clean": exposure.clean}
        if candidate.look is not None else None,
        "sequential": {"looks": max(1, candidate.sequential_looks),
                       "method": decision.bound.name} if ran else None,
        "test_fingerprints_seen": exposure.fingerprints if ran else None,
        "rejected": [{"line": line, "code": code, "message": message}
                     for line, code, message in candidate.split.rejected],
        "raters": None if candidate.raters is None else candidate.raters.as_json(),
        "certificate": certificate,
    }


def _rate(rate: Rate | None) -> dict[str, Any] | None:
    return None if rate is None else rate.as_json()
