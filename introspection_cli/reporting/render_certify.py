"""``judges certify``'s text: each judge's decision and what it rests on; and
``--verify``'s, the recorded procedure run again."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from introspection_cli.certification.bounds import METHODS
from introspection_cli.certification.exposure import Exposure
from introspection_cli.certification.power import describe_plan
from introspection_cli.reporting.outputs import CertifyOutput, Plan, VerifyOutput


def certify_text(output: CertifyOutput) -> str:
    """Every judge's certification as text, a blank line between them."""
    return "\n".join(judge_text(data, plan) for data, plan in output.judges)


def verify_text(output: VerifyOutput) -> str:
    """Every judge's verification as text."""
    return "".join(_verified_text(data) for data in output.judges)


def judge_text(data: Mapping[str, Any], plan: Plan) -> str:
    """One judge's certification as text: what it rests on, then the decision (and the plan
    when not certified)."""
    labelled = data["labelled"]
    lines = [f"judge {data['judge']} ({data['provider']}/{data['model']}), split "
             f"{data['split']}, bar {data['bar']:g}",
             f"  fingerprint {data['fingerprint']}",
             f"  rows       {data['rows']} ({labelled.get('pass', 0)} pass, "
             f"{labelled.get('fail', 0)} fail, {labelled.get('not_applicable', 0)} "
             f"not_applicable)", *raters_lines(data)]
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


def raters_lines(data: Mapping[str, Any]) -> list[str]:
    """What the raters changed: the rows in conflict left out, the alpha required."""
    raters = data.get("raters")
    if raters is None:
        return []
    excluded = raters["excluded"]
    lines = [f"  raters     {len(excluded)} row(s) in conflict left out (not evaluated)"
             + (f": {', '.join(excluded[:5])}{', ...' if len(excluded) > 5 else ''}; settle "
                f"them with `introspection judges label --adjudicate --judge {data['judge']}`"
                if excluded else "")]
    alpha = raters["alpha"]
    if raters["min_alpha"] is not None and alpha is not None:
        lines.append(f"  rater alpha {alpha['value']:.3f} ({alpha['low']:.3f}–"
                     f"{alpha['high']:.3f}, bootstrap 95%) over {alpha['units']} rows, "
                     f"--min-rater-alpha {raters['min_alpha']:g}")
    return lines


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


def _verified_text(data: Mapping[str, Any]) -> str:
    name = data["judge"]
    if "decision" not in data:
        return f"judge {name}: not verified: {data['reasons'][0]}\n"
    same = data["rows"] - len(data["changed_outcomes"])
    head = (f"judge {name} ({data['provider']}/{data['model']}, {data['samples']} sample(s)), "
            f"split {data['split']}: {same} of {data['rows']} rows gave the recorded outcome")
    rates = "; ".join(f"{rate} {data[rate]['value']:.3f} ({data[rate]['low']:.3f}–"
                      f"{data[rate]['high']:.3f}), recorded {data['recorded'][rate]['value']:.3f}"
                      for rate in ("tpr", "tnr") if data[rate] is not None)
    verdict = ("verified: the recorded procedure certifies it again" if data["verified"]
               else "not verified: the recorded procedure no longer certifies it")
    return f"{head}\n  {rates}\n{verdict}\n"
