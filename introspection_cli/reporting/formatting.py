"""Formatting helpers every report renderer shares (and nothing else).

The one module renderers may import besides the report model and the
comparisons: how a statistic, an interval or a delta is written, how untrusted
text (model reasoning, conversation ids) is made safe to show on one line, and
which rows count as disagreements.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from introspection_cli.reporting.baseline import JudgeComparison, StatDelta
from introspection_cli.reporting.metrics import agrees

#: Shown in place of a null statistic.
NULL = "—"
#: Longest reasoning shown for one disagreement; the JSON report keeps it whole.
REASONING_LIMIT = 280
#: Below this McNemar p-value a change in agreement is called unlikely to be chance.
SIGNIFICANCE = 0.05

# C0/C1 controls (ESC starts terminal escape sequences) and the bidirectional
# overrides that can make displayed text read differently from what it is.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_WHITESPACE = re.compile(r"\s+")

STATS_COLUMNS: tuple[str, ...] = ("split", "n", "judged", "gated", "errors", "unstable",
                                  "agreement", "kappa", "tpr", "tnr")



def clean(text: str, limit: int | None = None) -> str:
    """``text`` on one line without control characters, cut at ``limit`` chars with an ellipsis."""
    flat = _WHITESPACE.sub(" ", _CONTROL.sub(" ", text)).strip()
    if limit is not None and len(flat) > limit:
        return flat[: limit - 1].rstrip() + "…"
    return flat


def format_interval(interval: Mapping[str, float] | None) -> str:
    """``0.800 (0.490–0.943)``, or the null mark."""
    if interval is None:
        return NULL
    return f"{interval['value']:.3f} ({interval['low']:.3f}–{interval['high']:.3f})"


def format_kappa(kappa: float | None) -> str:
    return NULL if kappa is None else f"{kappa:.3f}"


def format_delta(delta: StatDelta) -> str:
    """``0.750 → 0.833 (+0.083)``; a null side shows the null mark and no difference."""
    before = NULL if delta.before is None else f"{delta.before:.3f}"
    after = NULL if delta.after is None else f"{delta.after:.3f}"
    change = "" if delta.delta is None else f" ({delta.delta:+.3f})"
    return f"{before} → {after}{change}"


def stats_cells(split: str, stats: Mapping[str, Any]) -> list[str]:
    """One table row of :data:`STATS_COLUMNS` for one split."""
    return [split, *(str(stats[key]) for key in ("n", "judged", "gated", "errors", "unstable")),
            format_interval(stats["agreement"]), format_kappa(stats["kappa"]),
            format_interval(stats["tpr"]), format_interval(stats["tnr"])]


def disagreements(rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Rows scored against their label that disagree with it (errors are listed apart)."""
    return [row for row in rows
            if row["outcome"] != "error" and not agrees(row["expected"], row["outcome"])]




def mcnemar_sentence(judge: JudgeComparison) -> str:
    """McNemar's result in words: counts of improved/regressed rows and the p-value."""
    test = judge.mcnemar
    # The reading users need, not just the number: 0.05 is the conventional line.
    verdict = ("unlikely to be chance" if test.p_value < SIGNIFICANCE
               else "could be chance")
    return (f"McNemar exact test over {test.paired} paired rows: {test.improved} now agree, "
            f"{test.regressed} no longer agree, p = {test.p_value:.3g} ({verdict})")
