"""Gates on a report: the thresholds a judge must meet for ``judges eval`` to succeed.

Part of the report model layer: gates read the report dict, never a renderer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from introspection_cli.errors import UsageError
from introspection_cli.evaluation.outcomes import SPLITS


def threshold_failures(report: dict[str, Any], *, min_agreement: float | None,
                       min_kappa: float | None, split: str = "all") -> list[str]:
    """One message per judge and threshold missed on ``split``; an empty list means all met.

    Thresholds compare the point estimate (not the interval's lower bound)
    and are inclusive: agreement 0.8 meets ``--min-agreement 0.8``. A null
    statistic (no non-error rows; kappa undefined) does not meet a threshold.
    """
    if split not in SPLITS:
        raise UsageError(f"unknown split {split!r} for thresholds; use one of: {', '.join(SPLITS)}")
    failures: list[str] = []
    for judge in report["judges"]:
        stats = judge["splits"][split]
        agreement = stats["agreement"]["value"] if stats["agreement"] is not None else None
        checks: Sequence[tuple[str, str, float | None, float | None]] = (
            ("agreement", "--min-agreement", min_agreement, agreement),
            ("kappa", "--min-kappa", min_kappa, stats["kappa"]),
        )
        for statistic, flag, minimum, value in checks:
            if minimum is None:
                continue
            where = f"judge {judge['name']}: {statistic} on split {split}"
            if value is None:
                failures.append(f"{where} is null ({_null_reason(statistic, stats)}), "
                                f"which does not meet {flag} {minimum:g}")
            elif value < minimum:
                failures.append(f"{where} is {value:.3f}, below {flag} {minimum:g}")
    return failures


def _null_reason(statistic: str, stats: dict[str, Any]) -> str:
    if stats["n"] == 0:
        return "no rows in this split"
    if stats["n"] == stats["errors"]:
        return "every row is an error"
    if statistic == "kappa":
        return "every label and outcome is the same class, so kappa is undefined"
    return "no rows to score"
