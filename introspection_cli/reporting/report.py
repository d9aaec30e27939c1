"""The eval report as a value: frozen dataclasses with ``as_json()`` and ``from_json()``.

:meth:`EvalReport.as_json` gives exactly the JSON document of
:mod:`.model` (the same keys in the same order, the same values), and
:meth:`EvalReport.from_json` reads a report of any version ``--baseline`` reads
(1 to 3): what an older version does not hold (a fingerprint, the gates, the
samples, a statistic added since) is ``None``, empty or zero, and its ``all``
split is read as ``scored``. ``from_json`` trusts its input's shape: a file is
validated against its version's schema first
(:func:`~.baseline.load_report_file`).

The raters' ceiling and the model comparison are kept as the JSON objects they
are in the report (:data:`JSONObject`): typing them is the next step.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from introspection_cli.evaluation.outcomes import RowOutcome
from introspection_cli.provenance import GitState
from introspection_cli.reporting.metrics import SCORED, SplitStats
from introspection_cli.reporting.model import REPORT_VERSION
from introspection_cli.statistics import Interval

#: A part of the report still kept as its JSON object.
JSONObject = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class HeldOut:
    """A held-out test split: its rows were not run, only counted."""

    n: int

    def as_json(self) -> dict[str, Any]:
        return {"held_out": True, "n": self.n}


#: split name -> its statistics, or the held-out marker; ``scored`` last (``all`` is
#: only its alias in the JSON).
Splits = Mapping[str, SplitStats | HeldOut]


@dataclass(frozen=True, slots=True)
class Rejected:
    """A calibration row left out of the statistics, with its code and message."""

    line: int
    code: str
    message: str

    def as_json(self) -> dict[str, Any]:
        return {"line": self.line, "code": self.code, "message": self.message}

    @classmethod
    def from_json(cls, data: JSONObject) -> Rejected:
        return cls(data["line"], data["code"], data["message"])


#: One calibration row's outcome as the report holds it: the run's own value (a row read
#: from a JSON report has unknown ``tokens``: reports keep tokens per run, not per row).
ReportRow = RowOutcome


def row_json(row: RowOutcome) -> dict[str, Any]:
    """A row of a report's ``rows`` (``snapshot_hash`` only when known)."""
    data = {"line": row.line, "conversation_id": row.conversation_id, "split": row.split,
            "expected": row.expected, "outcome": row.outcome, "samples": list(row.samples),
            "unstable": row.unstable, "reasoning": row.reasoning, "error": row.error,
            "cached": row.cached}
    if row.snapshot_hash is not None:
        data["snapshot_hash"] = row.snapshot_hash
    return data


def row_from_json(data: JSONObject) -> RowOutcome:
    """A report row of any version (``snapshot_hash`` None in version 1, which did not
    record it)."""
    return RowOutcome(data["line"], data["conversation_id"], data["split"], data["expected"],
                      data["outcome"], tuple(data["samples"]), data["unstable"],
                      data["reasoning"], data["error"], data["cached"],
                      data.get("snapshot_hash"), None)


@dataclass(frozen=True, slots=True)
class NeededTokens:
    """The tokens a judge's rows needed, from this run or the cache; ``unknown_rows``
    are the rows whose cached replies were stored without their tokens."""

    input_tokens: int
    output_tokens: int
    cached_input_tokens: int
    cache_write_tokens: int
    unknown_rows: int

    def as_json(self) -> dict[str, Any]:
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cached_input_tokens": self.cached_input_tokens,
                "cache_write_tokens": self.cache_write_tokens,
                "unknown_rows": self.unknown_rows}

    @classmethod
    def from_json(cls, data: JSONObject) -> NeededTokens:
        return cls(data["input_tokens"], data["output_tokens"], data["cached_input_tokens"],
                   data["cache_write_tokens"], data["unknown_rows"])


@dataclass(frozen=True, slots=True)
class ReportUsage:
    """What requests were made and what they cost (``cost`` None: no price known); a
    judge's usage with several models also says what its rows ``needed``."""

    requests: int
    cached: int
    input_tokens: int
    output_tokens: int
    batch_requests: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    rate_limited: int = 0
    concurrency: int | None = None
    cost: float | None = None
    needed: NeededTokens | None = None

    def as_json(self) -> dict[str, Any]:
        usage: dict[str, Any] = {
            "requests": self.requests, "batch_requests": self.batch_requests,
            "cached": self.cached,
            "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
            "cached_input_tokens": self.cached_input_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "rate_limited": self.rate_limited, "concurrency": self.concurrency,
            "cost": self.cost}
        if self.needed is not None:
            usage["needed"] = self.needed.as_json()
        return usage

    @classmethod
    def from_json(cls, data: JSONObject) -> ReportUsage:
        needed = data.get("needed")
        return cls(data["requests"], data["cached"], data["input_tokens"],
                   data["output_tokens"], data.get("batch_requests", 0),
                   data.get("cached_input_tokens", 0), data.get("cache_write_tokens", 0),
                   data.get("rate_limited", 0), data.get("concurrency"), data.get("cost"),
                   None if needed is None else NeededTokens.from_json(needed))


@dataclass(frozen=True, slots=True)
class ModelRun:
    """A judge's run with another ``--model``, on the same rows as its first."""

    provider: str
    model: str
    fingerprint: str | None
    splits: Splits
    rows: tuple[ReportRow, ...]
    usage: ReportUsage

    def as_json(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model,
                "fingerprint": self.fingerprint, "splits": splits_json(self.splits),
                "rows": [row_json(row) for row in self.rows], "usage": self.usage.as_json()}

    @classmethod
    def from_json(cls, data: JSONObject) -> ModelRun:
        return cls(data["provider"], data["model"], data.get("fingerprint"),
                   splits_from_json(data["splits"]),
                   tuple(row_from_json(row) for row in data["rows"]),
                   ReportUsage.from_json(data["usage"]))


@dataclass(frozen=True, slots=True)
class JudgeEntry:
    """One judge's part of the report: its run with the first model and, with several
    ``--model``, its ``usage``, the other ``models`` and their comparison."""

    name: str
    provider: str
    model: str
    fingerprint: str | None
    rejected: tuple[Rejected, ...]
    splits: Splits
    rows: tuple[ReportRow, ...]
    #: Set only with several models (the run's usage covers a single model).
    usage: ReportUsage | None = None
    models: tuple[ModelRun, ...] = ()
    raters: JSONObject | None = None
    model_comparison: JSONObject | None = None

    @property
    def scored(self) -> SplitStats:
        """The statistics over every evaluated row (a split that is never held out)."""
        return scored_of(self.splits, f"judge {self.name}")

    def as_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "name": self.name, "provider": self.provider, "model": self.model,
            "fingerprint": self.fingerprint,
            "rejected": [rejected.as_json() for rejected in self.rejected],
            "splits": splits_json(self.splits), "rows": [row_json(row) for row in self.rows]}
        if self.usage is not None:
            entry["usage"] = self.usage.as_json()
            entry["models"] = [model.as_json() for model in self.models]
        if self.raters is not None:
            entry["raters"] = self.raters
        if self.model_comparison is not None:
            entry["model_comparison"] = self.model_comparison
        return entry

    @classmethod
    def from_json(cls, data: JSONObject) -> JudgeEntry:
        usage = data.get("usage")
        return cls(data["name"], data["provider"], data["model"], data.get("fingerprint"),
                   tuple(Rejected.from_json(rejected) for rejected in data["rejected"]),
                   splits_from_json(data["splits"]),
                   tuple(row_from_json(row) for row in data["rows"]),
                   None if usage is None else ReportUsage.from_json(usage),
                   tuple(ModelRun.from_json(model) for model in data.get("models", ())),
                   data.get("raters"), data.get("model_comparison"))


@dataclass(frozen=True, slots=True)
class ReportGate:
    """One bar and what the judge reached (``value`` None: the statistic is null)."""

    judge: str
    split: str
    statistic: str
    bound: str
    bar: float
    value: float | None
    met: bool

    def as_json(self) -> dict[str, Any]:
        return {"judge": self.judge, "split": self.split, "statistic": self.statistic,
                "bound": self.bound, "bar": self.bar, "value": self.value, "met": self.met}

    @classmethod
    def from_json(cls, data: JSONObject) -> ReportGate:
        return cls(data["judge"], data["split"], data["statistic"], data["bound"],
                   data["bar"], data["value"], data["met"])


@dataclass(frozen=True, slots=True)
class EvalReport:
    """The report of a ``judges eval``: built once, rendered in every format."""

    recipe: str
    judges: tuple[JudgeEntry, ...]
    usage: ReportUsage
    #: None in a report before version 3, which did not say (see :attr:`several_samples`).
    samples: int | None = None
    gates: tuple[ReportGate, ...] = ()
    tool_version: str | None = None
    created_at: str | None = None
    git: GitState | None = None
    #: The version the report was read as; :meth:`as_json` writes the current one.
    version: int = REPORT_VERSION

    @property
    def several_samples(self) -> bool:
        """Whether the run made more than one call per row (``--samples`` > 1), so rows can
        be unstable. A report before version 3 does not say: a row with several tells."""
        if self.samples is not None:
            return self.samples > 1
        return any(len(row.samples) > 1 for judge in self.judges for row in judge.rows)

    def as_json(self) -> dict[str, Any]:
        """The JSON report (the current version), exactly as ``--output`` writes it."""
        return {
            "report_version": REPORT_VERSION,
            "tool_version": self.tool_version,
            "created_at": self.created_at,
            "git": self.git.as_json() if self.git is not None else None,
            "recipe": self.recipe,
            "samples": self.samples,
            "judges": [judge.as_json() for judge in self.judges],
            "gates": [gate.as_json() for gate in self.gates],
            "usage": self.usage.as_json(),
        }

    @classmethod
    def from_json(cls, data: JSONObject) -> EvalReport:
        """A JSON report of version 1 to 3, already checked against its schema."""
        git = data.get("git")
        return cls(
            recipe=data["recipe"],
            judges=tuple(JudgeEntry.from_json(judge) for judge in data["judges"]),
            usage=ReportUsage.from_json(data["usage"]),
            samples=data.get("samples"),
            gates=tuple(ReportGate.from_json(gate) for gate in data.get("gates", ())),
            tool_version=data.get("tool_version"), created_at=data.get("created_at"),
            git=None if git is None else GitState(git["commit"], git["dirty"]),
            version=data["report_version"])


def scored_of(splits: Splits, owner: str) -> SplitStats:
    """The statistics over every evaluated row of ``owner``'s ``splits``: a split that is
    never held out (a TypeError names ``owner`` if it is)."""
    stats = splits[SCORED]
    if isinstance(stats, HeldOut):
        raise TypeError(f"{owner}: the {SCORED} split cannot be held out")
    return stats


def splits_json(splits: Splits) -> dict[str, Any]:
    """A judge's ``splits`` object, with ``all``, the name reports before version 3 gave
    ``scored``, repeated for the scripts that read it."""
    out: dict[str, Any] = {name: stats.as_json() for name, stats in splits.items()}
    if SCORED in out:
        out["all"] = out[SCORED]
    return out


def splits_from_json(data: JSONObject) -> dict[str, SplitStats | HeldOut]:
    """A ``splits`` object of any version: ``all`` read as ``scored`` where there is none."""
    splits: dict[str, SplitStats | HeldOut] = {}
    for name, stats in data.items():
        if name == "all" and SCORED in data:
            continue
        splits[SCORED if name == "all" else name] = (
            HeldOut(stats["n"]) if stats.get("held_out") else stats_from_json(stats))
    return splits


def stats_from_json(data: JSONObject) -> SplitStats:
    """A ``STATS`` object: ``na_agreement`` and ``precision`` are absent before version 3
    and version 2."""
    return SplitStats(
        n=data["n"], judged=data["judged"], gated=data["gated"], errors=data["errors"],
        unstable=data["unstable"], agreement=interval_from_json(data["agreement"]),
        na_agreement=interval_from_json(data.get("na_agreement")), kappa=data["kappa"],
        tpr=interval_from_json(data["tpr"]), tnr=interval_from_json(data["tnr"]),
        confusion={label: dict(counts) for label, counts in data["confusion"].items()},
        precision={verdict: interval_from_json(interval)
                   for verdict, interval in data.get("precision", {}).items()})


def interval_from_json(data: JSONObject | None) -> Interval | None:
    """An ``{"value", "low", "high"}`` object, or None for null."""
    return None if data is None else Interval(data["value"], data["low"], data["high"])


def as_report(report: EvalReport | JSONObject) -> EvalReport:
    """``report`` as the typed value: an :class:`EvalReport` as it is, its JSON (a report
    built by :func:`.assemble.build_report`, or one a script wrote) read by
    :meth:`EvalReport.from_json`."""
    return report if isinstance(report, EvalReport) else EvalReport.from_json(report)

