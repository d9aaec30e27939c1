"""``judges plan``'s text: the test rows of each class, the labels to collect and the cost
of the calls, in words (its JSON is the plan's document)."""

from __future__ import annotations

from introspection_cli.certification.bounds import WILSON
from introspection_cli.certification.power import describe_plan
from introspection_cli.reporting.plan_values import CallCost, CertificationPlan
from introspection_cli.reporting.status_values import PLANNED


def plan_text(planned: CertificationPlan) -> str:
    """The plan in words."""
    power = planned.plan.power
    lines = [f"judge {planned.judge}: to certify at bar {power.bar:g} with probability "
             f"{power.power:.0%}",
             f"  bound      {_bound_text(planned)}"]
    for label, plan in power.classes.items():
        name = PLANNED[label].upper()
        rows = "out of reach: no number of rows would do" if plan.rows is None else \
            f"{plan.rows} test rows"
        more = "" if plan.more is None else f", {plan.more} more"
        lines.append(f"  {label:<10} {rows} at {name} {plan.rate:.3f} "
                     f"({planned.sources[label]}); test holds {plan.held}{more}")
    lines.append(f"  labels     {_labels_text(planned)}")
    if planned.labels_fill_test:
        lines.append(f"             with `judges split --fill-test` (every new label to test "
                     f"until the plan is met): about {planned.labels_fill_test}")
    lines.append(f"             new labels are assumed {power.class_mix.get('pass', 0.5):.0%} "
                 "pass, as labelled so far")
    lines.append(f"  cost       {_cost_text(planned.cost)}")
    return "\n".join(lines) + "\n"


def _bound_text(planned: CertificationPlan) -> str:
    if planned.bound is WILSON:
        return ("Wilson: the next certification is the first look at these test rows by "
                "this judge version")
    return (f"anytime-valid: this judge version looked at these test rows {planned.looks} "
            "time(s); every later look is decided with the anytime-valid bound, so looking "
            "after each labelling round keeps the level")


def _labels_text(planned: CertificationPlan) -> str:
    power = planned.plan.power
    described = describe_plan(power, planned.sources)
    if power.labels is None:
        return ("unknown: a class is out of reach, or no label of it yet to say how often "
                "new labels are of it")
    return described[-1]


def _cost_text(cost: CallCost) -> str:
    calls = f"about {cost.calls} model call(s) to certify at the plan ({cost.provider}/" \
        f"{cost.model})"
    cached = "rows already in the verdict cache cost nothing"
    if cost.input_tokens is None:
        return f"{calls}; no row of the file to estimate a call's tokens from; {cached}"
    tokens = (f"~{cost.input_tokens:,} input and ~{cost.output_tokens:,} output tokens "
              f"(estimated from {cost.sampled} row(s))")
    price = "no price for the model in prices.toml" if cost.cost is None else \
        f"${cost.cost:,.4f}"
    return f"{calls}: {tokens}, {price}; {cached}"
