"""Agreement statistics for a judge's outcomes against human labels (SPEC §3.2, §9.1).

Pure functions over :class:`~introspection_cli.evaluation.outcomes.RowOutcome`
values, standard library only. Two rules hold everywhere:

* ``error`` rows are counted and shown but excluded from every denominator:
  a provider failure or an unparseable reply says nothing about the rubric.
* a statistic whose denominator is empty is ``None`` (JSON ``null``), never 0,
  so "no data" cannot be mistaken for "always wrong".

``gated`` (the gate did not fire, no model call) agrees with an expected
``not_applicable`` and disagrees with ``pass``/``fail``. Each rate counts only
the rows its name says, so that rows a judge cannot get wrong (a gate's misses
on rows labelled not_applicable) cannot raise it: ``agreement`` is over rows
labelled pass or fail, ``na_agreement`` over rows labelled not_applicable, and
kappa over the rows the model judged. See ``docs/statistics.md``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from introspection_cli.evaluation.outcomes import OUTCOMES, VERDICTS, RowOutcome
from introspection_cli.statistics import Interval, wilson_interval


@dataclass(frozen=True, slots=True)
class SplitStats:
    """The statistics of one judge on one split (one ``STATS`` object of SPEC §3.2)."""

    n: int
    judged: int
    gated: int
    errors: int
    unstable: int
    #: Applicable agreement: over rows labelled pass or fail, the share whose outcome is
    #: their label (a not_applicable, gated or other-class outcome is a miss).
    agreement: Interval | None
    #: Over rows labelled not_applicable, the share whose outcome is not_applicable or gated.
    na_agreement: Interval | None
    #: Cohen's kappa over the three labels on the rows the model judged (gated left out).
    kappa: float | None
    tpr: Interval | None
    tnr: Interval | None
    #: expected label -> outcome -> count; every verdict and every outcome present.
    confusion: Mapping[str, Mapping[str, int]]
    #: verdict -> share of the rows given that verdict (gated as not_applicable) whose
    #: label is that verdict; None when no row got it.
    precision: Mapping[str, Interval | None]

    def as_json(self) -> dict[str, Any]:
        """The SPEC §3.2 ``STATS`` object."""
        return {
            "n": self.n,
            "judged": self.judged,
            "gated": self.gated,
            "errors": self.errors,
            "unstable": self.unstable,
            "agreement": _interval_json(self.agreement),
            "na_agreement": _interval_json(self.na_agreement),
            "kappa": self.kappa,
            "tpr": _interval_json(self.tpr),
            "tnr": _interval_json(self.tnr),
            "confusion": {label: dict(counts) for label, counts in self.confusion.items()},
            "precision": {verdict: _interval_json(interval)
                          for verdict, interval in self.precision.items()},
        }


def _interval_json(interval: Interval | None) -> dict[str, float] | None:
    return None if interval is None else interval.as_json()


def _as_verdict(label: str) -> str:
    """Map an outcome to a kappa class: ``gated`` means the judge did not apply."""
    if label == "gated":
        return "not_applicable"
    if label not in VERDICTS:
        raise ValueError(f"kappa is over the three verdicts and gated, not {label!r}")
    return label


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float | None:
    """Cohen's kappa over (expected, outcome) pairs, three classes, ``gated`` as not_applicable.

    ``None`` when it is undefined: no pairs, or chance agreement p_e = 1,
    which happens exactly when both sides used one and the same class for
    every row (kappa is then 0/0: agreement is perfect but there is nothing
    to tell apart from chance). Callers must drop ``error`` rows first; an
    ``error`` label raises ``ValueError``.
    """
    return _kappa_of_counts(Counter(pairs))


def _kappa_of_counts(pairs: Mapping[tuple[str, str], int]) -> float | None:
    """:func:`cohen_kappa` over (expected, outcome) -> how many rows had that pair."""
    classes: dict[str, int] = {label: index for index, label in enumerate(VERDICTS)}
    expected_totals = [0] * len(VERDICTS)
    outcome_totals = [0] * len(VERDICTS)
    diagonal = total = 0
    for (expected, outcome), count in pairs.items():
        row, column = classes[_as_verdict(expected)], classes[_as_verdict(outcome)]
        expected_totals[row] += count
        outcome_totals[column] += count
        diagonal += count if row == column else 0
        total += count
    if not total:
        return None
    # kappa = (p_o - p_e) / (1 - p_e), multiplied through by total² so the
    # undefined case is an exact integer zero rather than a float near it.
    chance = sum(e * o for e, o in zip(expected_totals, outcome_totals, strict=True))
    denominator = total * total - chance
    if denominator == 0:
        return None
    return (total * diagonal - chance) / denominator


def agrees(expected: str, outcome: str) -> bool:
    """Whether an outcome agrees with the label; ``gated`` agrees with ``not_applicable``."""
    return outcome == expected or (outcome == "gated" and expected == "not_applicable")


def confusion_matrix(rows: Iterable[RowOutcome]) -> dict[str, dict[str, int]]:
    """Expected label -> outcome -> count, with every verdict and outcome present (zeros kept)."""
    pairs: Counter[tuple[str, str]] = Counter((row.expected, row.outcome) for row in rows)
    return _confusion_of_counts(pairs)


def _confusion_of_counts(pairs: Mapping[tuple[str, str], int]) -> dict[str, dict[str, int]]:
    matrix: dict[str, dict[str, int]] = {
        label: dict.fromkeys(OUTCOMES, 0) for label in VERDICTS
    }
    for (expected, outcome), count in pairs.items():
        matrix[expected][outcome] += count
    return matrix


def _rate(pairs: Mapping[tuple[str, str], int], label: str) -> Interval | None:
    """Share of rows expected ``label`` whose outcome is ``label`` (TPR for pass, TNR for fail),
    over (expected, outcome) -> count."""
    labelled = sum(count for (expected, _), count in pairs.items() if expected == label)
    return wilson_interval(pairs.get((label, label), 0), labelled)


def _precision(pairs: Mapping[tuple[str, str], int], verdict: str) -> Interval | None:
    """Share of rows whose outcome is ``verdict`` (gated counts as not_applicable) that are
    labelled ``verdict``: how far a verdict of this judge can be taken at its word."""
    given = {(expected, outcome): count for (expected, outcome), count in pairs.items()
             if _as_verdict(outcome) == verdict}
    return wilson_interval(sum(count for (expected, _), count in given.items()
                               if expected == verdict), sum(given.values()))


def split_stats(rows: Sequence[RowOutcome]) -> SplitStats:
    """Every statistic of SPEC §3.2 and §9.1 over ``rows`` (one split of one judge).

    ``unstable`` counts rows whose samples disagreed, including ties, which
    are ``error`` rows ("no majority"). Every statistic but ``unstable`` is a
    function of how many rows had each (expected, outcome) pair, so the rows are
    counted once and the statistics read the counts.
    """
    pairs: Counter[tuple[str, str]] = Counter((row.expected, row.outcome) for row in rows)
    scored: dict[tuple[str, str], int] = {pair: count for pair, count in pairs.items()
                                          if pair[1] != "error"}
    return SplitStats(
        n=len(rows),
        judged=sum(count for (_, outcome), count in pairs.items() if outcome in VERDICTS),
        gated=sum(count for (_, outcome), count in pairs.items() if outcome == "gated"),
        errors=len(rows) - sum(scored.values()),
        unstable=sum(row.unstable for row in rows),
        agreement=_agreement_among(scored, APPLICABLE_LABELS),
        na_agreement=_agreement_among(scored, ("not_applicable",)),
        kappa=_kappa_of_counts({pair: count for pair, count in scored.items()
                                if pair[1] in VERDICTS}),
        tpr=_rate(scored, "pass"),
        tnr=_rate(scored, "fail"),
        confusion=_confusion_of_counts(pairs),
        precision={verdict: _precision(scored, verdict) for verdict in VERDICTS},
    )


#: The labels applicable agreement is over: a judge that applies says pass or fail.
APPLICABLE_LABELS: tuple[str, ...] = ("pass", "fail")


def _agreement_among(pairs: Mapping[tuple[str, str], int],
                     labels: Sequence[str]) -> Interval | None:
    """Share of the rows labelled one of ``labels`` whose outcome agrees with the label,
    over (expected, outcome) -> count (errors already left out)."""
    among = {pair: count for pair, count in pairs.items() if pair[0] in labels}
    return wilson_interval(sum(count for pair, count in among.items() if agrees(*pair)),
                           sum(among.values()))


#: The report's split of every evaluated row. Reports before version 3 called it ``all``,
#: which it was not when the test split was held out; version 3 writes both keys.
SCORED = "scored"
#: Old names of report splits, accepted where a split is named (``--threshold-split all``).
SPLIT_ALIASES: Mapping[str, str] = {"all": SCORED}
#: The splits of a report, in report order.
REPORT_SPLITS: tuple[str, ...] = ("train", "dev", "test", "unsplit", SCORED)


def split_key(row: RowOutcome) -> str:
    """The report split a row belongs to besides ``scored``: its split, or ``unsplit``."""
    return row.split if row.split is not None else "unsplit"


def stats_by_split(rows: Sequence[RowOutcome]) -> dict[str, SplitStats]:
    """:func:`split_stats` for every split in :data:`REPORT_SPLITS` order; empty splits have
    ``n == 0``."""
    by_split: dict[str, list[RowOutcome]] = {split: [] for split in REPORT_SPLITS}
    for row in rows:
        by_split[split_key(row)].append(row)
        by_split[SCORED].append(row)
    return {split: split_stats(split_rows) for split, split_rows in by_split.items()}
