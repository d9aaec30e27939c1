"""What ``judges status`` hands its renderers: a calibration file's counts, the dev figures,
the plan for the next certification, one judge's status and the report of them all.

Values at the bottom of the reporting layers, under :mod:`.plan_values` (``judges plan``'s,
on these): :mod:`~introspection_cli.workflows.status` builds them (and
:mod:`~introspection_cli.workflows.judge_plan` the counts, dev figures and plan),
:mod:`.render_status` prints them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from introspection_cli.certification.certificate import LabelledRow
from introspection_cli.certification.exposure import Exposure
from introspection_cli.certification.power import PowerPlan
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

    def as_json(self) -> dict[str, Any]:
        """Its object in ``judges status --format json``'s ``judges``."""
        counts, certificate, plan, dev = self.counts, self.certificate, self.plan, self.dev
        return {
            "name": self.name,
            "calibration": str(self.calibration),
            "fingerprint": self.fingerprint,
            "rows": counts.rows,
            "rejected": {"rows": counts.rejected_rows,
                         "by_code": dict(sorted(counts.rejected.items()))},
            "labelled": {label: counts.labelled(label) for label in LABELS[:3]},
            "unlabelled": counts.labelled("unlabelled"),
            "gate_misses": counts.gate_misses,
            "gate_errors": counts.gate_errors,
            "splits": {split: {label: counts.table[split][label] for label in LABELS}
                       for split in SPLIT_ROWS},
            "certificate": {"state": certificate.state, "path": str(certificate.path),
                            "changed": list(certificate.changed),
                            "problem": certificate.problem},
            "test_fingerprints_seen": self.test_fingerprints,
            "exposure": None if self.exposure is None else {
                **self.exposure.as_json(), "clean": self.exposure.clean},
            "exposure_problem": self.exposure_problem,
            "dev": None if dev is None else {
                "tpr": _interval(dev.tpr, dev.pass_rows),
                "tnr": _interval(dev.tnr, dev.fail_rows),
                "evaluated": dev.evaluated, "labelled": dev.labelled},
            "plan": {"bar": plan.bar, "rows_per_class": plan.floor,
                     "perfect": dict(plan.perfect),
                     "power": {**plan.power.as_json(), "assumed": list(plan.assumed)},
                     "never": list(plan.never)},
        }


@dataclass(frozen=True)
class StatusReport:
    """What ``judges status`` prints: the recipe as given and each judge's status."""

    recipe: str
    judges: tuple[JudgeStatus, ...]

    def as_json(self) -> dict[str, Any]:
        """The JSON object ``--format json`` prints."""
        return {"recipe": self.recipe, "judges": [status.as_json() for status in self.judges]}


def _interval(interval: Interval | None, n: int) -> dict[str, Any] | None:
    return None if interval is None else {**interval.as_json(), "n": n}
