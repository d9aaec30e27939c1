"""What ``judges plan`` hands its renderer: a certification's plan, and the cost of the calls
certifying at it would make.

Values beside :mod:`.outputs`, on :mod:`.status_values` (whose plan they extend), kept
apart from them so that ``judges status`` never defines them:
:mod:`~introspection_cli.workflows.judge_plan` builds them, :mod:`.render_plan` prints them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from introspection_cli.certification.bounds import BoundMethod
from introspection_cli.certification.power import labels_to_collect
from introspection_cli.reporting.status_values import Plan


@dataclass(frozen=True)
class CallCost:
    """The model calls of certifying at the plan: one per test row the gate matches."""

    calls: int
    provider: str
    model: str
    #: Estimated tokens of those calls; None when no row could be rendered to estimate from.
    input_tokens: int | None
    output_tokens: int | None
    #: US dollars, None without a price for the model (or without a token estimate).
    cost: float | None
    #: Rows rendered for the estimate.
    sampled: int

    def as_json(self) -> dict[str, Any]:
        return {"calls": self.calls, "provider": self.provider, "model": self.model,
                "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cost": self.cost, "rows_sampled": self.sampled}


@dataclass(frozen=True)
class CertificationPlan:
    """Everything ``judges plan`` says about one judge."""

    judge: str
    fingerprint: str
    plan: Plan
    bound: BoundMethod
    #: Looks at the rows now in test made by this judge version (one sample per row).
    looks: int
    sources: Mapping[str, str]
    cost: CallCost
    rejected: int

    @property
    def labels_fill_test(self) -> int | None:
        """Labels to collect when every new one goes to test (``judges split
        --fill-test``) until the plan is met."""
        power = self.plan.power
        more = {label: plan.more for label, plan in power.classes.items()}
        return labels_to_collect(more, 1.0, power.class_mix)[0]

    def as_json(self) -> dict[str, Any]:
        power = self.plan.power
        return {
            "judge": self.judge, "fingerprint": self.fingerprint, "bar": power.bar,
            "power": power.power,
            "bound": {"method": self.bound.name, "looks_before": self.looks},
            "classes": {label: {**plan.as_json(), "source": self.sources[label]}
                        for label, plan in power.classes.items()},
            "labels": power.labels, "reach_test": power.reach_test,
            "labels_fill_test": self.labels_fill_test,
            "test_share": power.test_share, "class_mix": dict(power.class_mix),
            "cost": self.cost.as_json(), "rejected_rows": self.rejected,
        }
