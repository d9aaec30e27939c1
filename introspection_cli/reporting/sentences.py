"""How the typed eval report (:mod:`.report`) is written out in words, for every renderer.

The bottom of the renderers' shared helpers: a bound, an interval, a gate, a
held-out split, what ``scored`` holds, where the report comes from, which rows
disagree.
"""

from __future__ import annotations

from collections.abc import Sequence

from introspection_cli.provenance import GitState
from introspection_cli.reporting.metrics import SCORED, SplitStats, agrees
from introspection_cli.reporting.model import HELD_OUT_HINT
from introspection_cli.reporting.report import (
    HeldOut,
    ReportGate,
    ReportRow,
    ReportUsage,
    Splits,
)
from introspection_cli.statistics import Interval

#: Shown in place of a null statistic.
NULL = "—"
#: Marks an interval's bound at the end of the scale, as written to three decimals (0 or
#: 1; ±1 for a change): where the interval stops, which a reader would take for a
#: measured certainty. :data:`EDGE_NOTE` says so under whatever shows one.
EDGE_MARK = "†"
EDGE_NOTE = (f"{EDGE_MARK} a bound at the end of the scale (0 or 1, to three decimals): "
             "where the interval stops, not a measured value")
_EDGES = frozenset({"0.000", "1.000", "+1.000", "-1.000"})
#: The counts of a split table, without ``unstable``.
_COUNTS: tuple[str, ...] = ("n", "judged", "gated", "errors")
#: The splits a judge's rows are in, without the one of every evaluated row.
ROW_SPLITS: tuple[str, ...] = ("train", "dev", "test", "unsplit")


def format_bound(bound: float, *, signed: bool = False) -> str:
    """An interval's bound to three decimals, marked with :data:`EDGE_MARK` at the end of
    the scale (``1.000†``); ``signed`` for a change (``+0.120``, ``-1.000†``)."""
    text = f"{bound:+.3f}" if signed else f"{bound:.3f}"
    return text + EDGE_MARK if text in _EDGES else text


def interval_text(interval: Interval | None) -> str:
    """``0.800 (0.490–0.943)``, ``1.000 (0.676–1.000†)``, or the null mark."""
    if interval is None:
        return NULL
    return f"{interval.value:.3f} ({format_bound(interval.low)}–{format_bound(interval.high)})"


def kappa_text(kappa: float | None) -> str:
    """Cohen's kappa to three decimals, or the null mark."""
    return NULL if kappa is None else f"{kappa:.3f}"


def provenance_text(tool_version: str | None, created_at: str | None,
                    git: GitState | None) -> str:
    """``introspection 0.1.0, 2026-11-20T10:04:11Z, git 1a2b3c4d (uncommitted changes)``;
    ``?`` for what a report before version 2 did not record."""
    parts = [f"introspection {tool_version or '?'}", created_at or "?"]
    if git is not None:
        parts.append(f"git {git.commit[:12]}{' (uncommitted changes)' if git.dirty else ''}")
    else:
        parts.append("not in a git work tree")
    return ", ".join(parts)


def gate_text(gate: ReportGate) -> str:
    """``tpr lower bound on split all ≥ 0.8: 0.831, met``: one gate of the report."""
    result = "met" if gate.met else "MISSED"
    value = NULL if gate.value is None else f"{gate.value:.3f}"
    if gate.statistic == "judged":
        return f"judged rows on split {gate.split} ≥ 1: {gate.value}, {result}"
    if gate.statistic == "error_rate":
        return f"error rate on split {gate.split} ≤ {gate.bar:g}: {value}, {result}"
    subject = f"{gate.statistic} lower bound" if gate.bound == "low" else gate.statistic
    return f"{subject} on split {gate.split} ≥ {gate.bar:g}: {value}, {result}"


def held_out_text(n: int) -> str:
    """``40 rows held out: --split test or judges certify``."""
    return f"{n} rows held out: {HELD_OUT_HINT}"


def scored_text(splits: Splits) -> str:
    """What the split ``scored`` holds: ``scored: every evaluated row (dev 12, unsplit 3;
    the held-out test split is not in it)``."""
    counted = [(split, splits[split]) for split in ROW_SPLITS]
    parts = [f"{split} {stats.n}" for split, stats in counted
             if not isinstance(stats, HeldOut) and stats.n]
    held = isinstance(splits["test"], HeldOut)
    inside = ", ".join(parts) or "no rows"
    return (f"{SCORED}: every evaluated row ({inside}"
            + ("; the held-out test split is not in it)" if held else ")"))


def disagrees(expected: str, outcome: str) -> bool:
    """Whether a row is scored against its label and disagrees with it (an error is not
    scored: errors are listed apart)."""
    return outcome != "error" and not agrees(expected, outcome)


def disagreeing(rows: Sequence[ReportRow]) -> list[ReportRow]:
    """The rows that disagree with their label (:func:`disagrees`)."""
    return [row for row in rows if disagrees(row.expected, row.outcome)]


def erroring(rows: Sequence[ReportRow]) -> list[ReportRow]:
    """The rows that ended as ``error``."""
    return [row for row in rows if row.outcome == "error"]


def count_columns(unstable: bool) -> tuple[str, ...]:
    """The count columns of a split table (``n`` to ``errors``, then ``unstable`` if shown)."""
    return (*_COUNTS, "unstable") if unstable else _COUNTS


def stats_counts(stats: SplitStats, *, unstable: bool) -> list[int]:
    """A split's counts in the columns of :func:`count_columns`."""
    counts = {"n": stats.n, "judged": stats.judged, "gated": stats.gated,
              "errors": stats.errors, "unstable": stats.unstable}
    return [counts[key] for key in count_columns(unstable)]


def stats_row(split: str, stats: SplitStats, *, unstable: bool) -> list[str]:
    """One split table row (not a held-out split): its counts, then its statistics."""
    return [split, *(str(count) for count in stats_counts(stats, unstable=unstable)),
            interval_text(stats.agreement), interval_text(stats.na_agreement),
            kappa_text(stats.kappa), interval_text(stats.tpr), interval_text(stats.tnr)]


def format_cost(dollars: float) -> str:
    """``$0.0040``: to a hundredth of a cent, since one run of a judge often costs less than
    a cent and models must still be told apart by it."""
    return f"${dollars:,.4f}"


def usage_text(usage: ReportUsage) -> str:
    """``4 requests, 30 cache hits, 5120 input tokens (4096 from the prompt cache), 900
    output tokens, $0.0123``: what a run used, and what the provider did to it."""
    prompt_cache = [f"{usage.cached_input_tokens} from the prompt cache"] \
        if usage.cached_input_tokens else []
    prompt_cache += [f"{usage.cache_write_tokens} written to it"] \
        if usage.cache_write_tokens else []
    batched = f" ({usage.batch_requests} through the batch API)" if usage.batch_requests else ""
    parts = [f"{usage.requests} requests{batched}", f"{usage.cached} cache hits",
             f"{usage.input_tokens} input tokens"
             + (f" ({', '.join(prompt_cache)})" if prompt_cache else ""),
             f"{usage.output_tokens} output tokens"]
    if usage.cost is not None:
        parts.append(format_cost(usage.cost))
    if usage.rate_limited:
        parts.append(f"rate limited {usage.rate_limited} time(s), concurrency settled at "
                     f"{usage.concurrency}")
    return ", ".join(parts)
