"""What ``judges certify`` prints: one judge's payload (``--format json``) and its text."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from introspection_cli.certification.bounds import METHODS, BoundMethod, method_for, plan_for
from introspection_cli.certification.decision import CLASSES, Certification, Rate
from introspection_cli.certification.exposure import Exposure
from introspection_cli.certification.power import (
    ASSUMED_RATE,
    PowerPlan,
    class_mix,
    describe_plan,
    share_reaching,
    shrunk_rate,
)
from introspection_cli.workflows.certify_steps import Candidate

Plan = tuple[PowerPlan, dict[str, str]]


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
        "certificate": certificate,
    }


def _rate(rate: Rate | None) -> dict[str, Any] | None:
    return None if rate is None else rate.as_json()


def text(data: Mapping[str, Any], plan: Plan) -> str:
    """One judge's text output."""
    labelled = data["labelled"]
    lines = [f"judge {data['judge']} ({data['provider']}/{data['model']}), split "
             f"{data['split']}, bar {data['bar']:g}",
             f"  fingerprint {data['fingerprint']}",
             f"  rows       {data['rows']} ({labelled.get('pass', 0)} pass, "
             f"{labelled.get('fail', 0)} fail, {labelled.get('not_applicable', 0)} "
             f"not_applicable)"]
    if data["sequential"] is not None:  # the judge ran: what it measured
        name = METHODS[data["sequential"]["method"]].interval_name(data["alpha"])
        lines += [f"  errors     {data['errors']} (at most {data['max_error_rate']:g} of the "
                  "rows)",
                  *(_rate_line(rate, data[rate], data["bar"] if rate != "na_recall" else
                               data["bar_na"], name) for rate in ("tpr", "tnr", "na_recall")),
                  f"  level      {_level(data)}",
                  f"  bound      {_bound(data['sequential'])}"]
        if data["exposure"] is not None:
            lines.append(f"  exposure   {exposure_text(data['exposure'])}")
    if data["decision"] == "certified":
        lines.append(f"certified: wrote {data['certificate']}" if data["certificate"]
                     else "certified, but no certificate was written")
    else:
        heading = ("insufficient data" if data["decision"] == "insufficient_data"
                   else "not certified")
        lines += [f"{heading}:", *(f"  {reason}" for reason in data["reasons"])]
        lines += [f"  {line}" for line in describe_plan(plan[0], plan[1], data["split"])]
    return "\n".join(lines) + "\n"


def _rate_line(name: str, rate: Mapping[str, Any] | None, bar: float | None,
               interval: str) -> str:
    if rate is None:
        return f"  {name:<10} — (no non-error row of this label)"
    verdict = "" if bar is None else ("  reaches the bar" if rate["low"] >= bar
                                      else "  below the bar")
    return (f"  {name:<10} {rate['value']:.3f} ({rate['low']:.3f}–{rate['high']:.3f}, "
            f"{interval}) over {rate['n']} rows{verdict}")


def _level(data: Mapping[str, Any]) -> str:
    family = data["family_wise"]
    own = f"each bound at one-sided {data['alpha']:.4g}"
    if family is None:
        return own + " (per judge)"
    return (f"{own}: {family['method']} over {family['judges']} judges keeps the chance of "
            f"any wrong certificate among them at {family['alpha']:g}")


def _bound(sequential: Mapping[str, Any]) -> str:
    looks = sequential["looks"]
    if sequential["method"] == "wilson":
        return "Wilson: the first look at these rows under this procedure"
    return (f"anytime-valid ({sequential['method']} mixture): look {looks} at these rows under "
            "this procedure, so a look after every labelling round keeps the level")


def exposure_text(exposure: Mapping[str, Any]) -> str:
    """A certificate's exposure in words."""
    seen = (f"{exposure['looks']} look(s) at these test rows by {exposure['procedures']} "
            "procedure(s)")
    if exposure["clean"]:
        return f"{seen}: clean"
    return f"{seen}: not clean: " + "; ".join(Exposure.from_json(exposure).problems())
