"""What ``judges status`` and ``judges plan`` hand their renderers: a calibration file's
counts, the dev figures, the plan for the next certification, one judge's status, and a
certification's plan with its cost.

Values at the bottom of the reporting layers, beside :mod:`.outputs`: the workflows
(:mod:`~introspection_cli.workflows.status`, :mod:`~introspection_cli.workflows.judge_plan`)
build them, their renderers print them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from introspection_cli.certification.bounds import BoundMethod
from introspection_cli.certification.certificate import LabelledRow
from introspection_cli.certification.exposure import Exposure
from introspection_cli.certification.power import PowerPlan, labels_to_collect
from introspection_cli.certification.state import CertificateState
from introspection_cli.statistics import Interval

if TYPE_CHECKING:
    from introspection_cli.fixture import FixtureRow

LABELS = ("pass", "fail", "not_applicable", "unlabelled")
SPLIT_ROWS = ("train", "dev", "test", "unsplit")
#: The classes certification needs, and the dev rate that predicts each one.
PLANNED = {"pass": "tpr", "fail": "tnr"}


@dataclass
class RowCounts:
    """Everything one pass over a calibration file counts."""

    rows: int = 0
    rejected_rows: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    #: split ("unsplit" for null) -> label ("unlabelled" for null) -> rows.
    table: dict[str, Counter[str]] = field(
        default_factory=lambda: {split: Counter() for split in SPLIT_ROWS})
    gate_misses: int | None = None
    gate_errors: int = 0
    #: conversation id -> (snapshot_hash, label), for the labelled rows now in test.
    test_rows: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: conversation id -> label, for the labelled rows now in dev.
    dev_labels: dict[str, str] = field(default_factory=dict)
    #: The labelled rows of the certificate's split, in file order.
    certified_split_rows: list[LabelledRow] = field(default_factory=list)
    #: The first verified rows of the file, when asked for (``judges plan`` prices their
    #: prompts).
    sample: list[FixtureRow] = field(default_factory=list)

    def labelled(self, label: str, split: str | None = None) -> int:
        splits = SPLIT_ROWS if split is None else (split,)
        return sum(self.table[s][label] for s in splits)


@dataclass(frozen=True)
class DevFigures:
    """TPR and TNR on the dev rows, from the outcomes the ledger recorded for the current
    fingerprint; ``evaluated`` of ``labelled`` dev rows have one."""

    tpr: Interval | None
    tnr: Interval | None
    pass_rows: int
    fail_rows: int
    evaluated: int
    labelled: int
    #: Of ``pass_rows`` judged pass, of ``fail_rows`` judged fail.
    pass_agreed: int = 0
    fail_agreed: int = 0


@dataclass(frozen=True)
class Plan:
    """More labelled test rows of ``pass`` and ``fail`` needed to certify the judge.

    ``perfect``: before a judge that agrees on every row could reach the bar.
    ``power``: before the judge is likely (80%, both classes together) to be
    certified, at its dev rates shrunk
    (:func:`~introspection_cli.certification.power.shrunk_rate`), or at an
    assumed rate for a class without dev figures (``assumed`` lists those);
    ``never`` lists classes whose planned rate leaves the bar out of reach;
    ``given`` those planned at a rate the user gave (``judges plan --expect-tpr``).
    """

    bar: float
    floor: int
    perfect: Mapping[str, int]
    power: PowerPlan
    assumed: tuple[str, ...] = ()
    never: tuple[str, ...] = ()
    given: tuple[str, ...] = ()


def rate_sources(dev: DevFigures | None, plan: Plan) -> dict[str, str]:
    """label -> where the rate its plan assumes comes from, in words."""
    sources = {}
    for label, name in PLANNED.items():
        rows = 0 if dev is None else (dev.pass_rows if label == "pass" else dev.fail_rows)
        rate = None if dev is None else (dev.tpr if label == "pass" else dev.tnr)
        if label in plan.given:
            sources[label] = f"{name.upper()} as expected"
        elif label in plan.assumed or rate is None:
            sources[label] = f"{name.upper()} assumed"
        else:
            sources[label] = f"dev {name.upper()} {rate.value:.3f} over {rows} rows, shrunk"
    return sources



@dataclass(frozen=True)
class JudgeStatus:
    """Where one judge with a calibration file stands: what ``judges status`` shows."""

    name: str
    calibration: Path
    fingerprint: str
    counts: RowCounts
    certificate: CertificateState
    #: What the looks in the exposure file say of the rows now in test; None with the
    #: reason in ``exposure_problem`` when the file cannot be read.
    exposure: Exposure | None
    dev: DevFigures | None
    plan: Plan
    exposure_problem: str | None = None

    @property
    def test_fingerprints(self) -> int:
        """How many judge versions have looked at the rows now in test."""
        return 0 if self.exposure is None else self.exposure.fingerprints


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
