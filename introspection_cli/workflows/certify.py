"""``judges certify`` end to end, minus the command line.

Runs one judge over one split (``test`` by default: the rows ``judges eval``
holds out), decides (:mod:`introspection_cli.certification.decision`), records
the run in the evaluation ledger, and when certified writes
``judges/<name>.certificate.json`` atomically. A split that cannot be
certified whatever the judge says (too few ``pass`` or ``fail`` rows, or
rejected rows in the file) is decided from the file, before any model call.

Exit codes: 0 certified; 1 not certified or insufficient data; 2 usage or
configuration (as in eval, and a certificate that cannot be written); 3 rows
failed at the provider after retries (then no certificate is written: rerun).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from introspection_cli.certification.certificate import (
    CERTIFICATE_VERSION,
    SplitRows,
    certificate_path,
    read_split,
    rows_digest,
    write_certificate,
)
from introspection_cli.certification.decision import (
    CLASSES,
    Certification,
    Rate,
    decide,
    insufficient,
    rejected_rows,
    z_for,
)
from introspection_cli.certification.power import (
    ASSUMED_RATE,
    PowerPlan,
    class_mix,
    describe_plan,
    plan_with_power,
    share_reaching,
    shrunk_rate,
)
from introspection_cli.errors import ExitCode, UsageError
from introspection_cli.evaluation.cache import default_cache_dir
from introspection_cli.evaluation.fingerprint import JudgeIdentity, judge_identity
from introspection_cli.evaluation.ledger import open_ledger, record_run
from introspection_cli.evaluation.outcomes import EvalRun
from introspection_cli.evaluation.plan import load_valid_recipe
from introspection_cli.evaluation.runner import EvalOptions, ProgressCallback, run_eval
from introspection_cli.fsutil import check_output_target
from introspection_cli.provenance import tool_version, utc_now
from introspection_cli.recipe.model import Judge
from introspection_cli.recipe.selection import named_judge
from introspection_cli.workflows.judges_eval import EvalCommandResult, provider_failure

CERTIFIABLE_SPLITS = ("test", "dev", "train")


@dataclass(frozen=True)
class CertifySettings:
    """What to certify against: the bar, the split, the error ceiling, the output format."""

    judge: str
    bar: float = 0.8
    split: str = "test"
    max_error_rate: float = 0.05
    bar_na: float | None = None
    fmt: str = "text"

    def check(self) -> None:
        if self.split not in CERTIFIABLE_SPLITS:
            raise UsageError(f"unknown --split {self.split!r}; use one of: "
                             f"{', '.join(CERTIFIABLE_SPLITS)}")
        for flag, value in (("--bar", self.bar), ("--bar-na", self.bar_na)):
            if value is not None and not (math.isfinite(value) and 0 < value < 1):
                raise UsageError(f"{flag} {value} must be a number above 0 and below 1")
        if not (math.isfinite(self.max_error_rate) and 0 <= self.max_error_rate <= 1):
            raise UsageError(f"--max-error-rate {self.max_error_rate} must be from 0 to 1")
        if self.fmt not in ("text", "json"):
            raise UsageError(f"unknown format {self.fmt!r}; use one of: text, json")


@dataclass(frozen=True)
class _Context:
    judge: Judge
    identity: JudgeIdentity
    provider: str
    model: str
    target: Path


def certify_judge(path: Path, options: EvalOptions, settings: CertifySettings, *,
                  progress: ProgressCallback | None = None) -> EvalCommandResult:
    """Run ``judges certify`` on the recipe at ``path``: what to print and the exit code."""
    settings.check()
    recipe, warnings = load_valid_recipe(path, [settings.judge])
    judge = named_judge(recipe, settings.judge)
    provider = options.provider or judge.llm.provider
    model = options.model or judge.llm.model
    context = _Context(judge, judge_identity(judge, provider=provider, model=model), provider,
                       model, certificate_path(judge.path.parent, judge.name))
    check_output_target(context.target, flag="the certificate")
    split = read_split(judge.calibration_path, settings.split) \
        if judge.calibration_path.is_file() else SplitRows([], [])
    early = _decided_from_the_file(split, settings.bar)
    if early is not None:
        plan = _power_plan(early, split, settings)
        payload = _payload(context, settings, early, options.samples, seen=None, plan=plan,
                           rejected=split.rejected)
        problems = [f"judge {judge.name}: {len({line for line, _, _ in split.rejected})} "
                    f"calibration row(s) rejected; `introspection check {path}` lists them"
                    ] if split.rejected else []
        return EvalCommandResult(_render(payload, settings.fmt, plan), ExitCode.PROBLEMS,
                                 (*problems, *(f"warning: {w}" for w in warnings)), payload)
    result = run_eval(recipe, replace(options, judges=(judge.name,), splits=(settings.split,)),
                      progress=progress)
    (run,) = result.run.judges
    seen, ledger_warnings = _record(result.run, options, settings.split)
    decision = decide(run.rows, bar=settings.bar, max_error_rate=settings.max_error_rate,
                      bar_na=settings.bar_na)
    plan = _power_plan(decision, split, settings)
    payload = _payload(context, settings, decision, options.samples, seen=seen, plan=plan)
    heading = "insufficient data" if decision.decision == "insufficient_data" else "not certified"
    problems = [f"judge {judge.name}: {heading}: {reason}" for reason in decision.reasons]
    notes = [*warnings, *ledger_warnings, *result.warnings, *_override_note(context)]
    exit_code = ExitCode.OK if decision.certified else ExitCode.PROBLEMS
    failed, failures = provider_failure(result)
    if failed is not None:
        exit_code = failed
        problems += [*failures, "no certificate was written: a decision needs every row"]
    elif decision.certified:
        certificate = _certificate(context, settings, decision, options.samples, seen,
                                   rows_digest(split.rows))
        write_certificate(context.target, certificate)
        payload["certificate"] = str(context.target)
    return EvalCommandResult(_render(payload, settings.fmt, plan), exit_code,
                             (*problems, *(f"warning: {note}" for note in notes)), payload)


def _decided_from_the_file(split: SplitRows, bar: float) -> Certification | None:
    """The decision when the file alone makes it, before any model call: rows of it are
    rejected, or the split holds too few rows to ever reach the bar."""
    labelled = {label: sum(expected == label for _, expected in split.rows)
                for label in ("pass", "fail", "not_applicable")}
    if split.rejected:
        return rejected_rows(labelled, bar, sorted({line for line, _, _ in split.rejected}))
    return insufficient(labelled, bar)


def _record(run: EvalRun, options: EvalOptions, split: str) -> tuple[int, list[str]]:
    """Record the run in the ledger: how many fingerprints have now seen the split's rows
    (this one included), and the ledger's warnings (test rows seen under several)."""
    ledger = open_ledger(options.cache_dir or default_cache_dir())
    try:
        warnings = record_run(ledger, run)
        (judge,) = run.judges
        seen = ledger.fingerprints_seen(judge.name, {row.conversation_id for row in judge.rows
                                                     if row.split == split})
        return max(1, len(seen)), warnings
    finally:
        ledger.close()


def _override_note(context: _Context) -> list[str]:
    if context.identity.fingerprint == judge_identity(context.judge).fingerprint:
        return []
    return [f"the certificate is for {context.provider}/{context.model}, but judges/"
            f"{context.judge.name}.yaml names {context.judge.llm.provider}/"
            f"{context.judge.llm.model}: `introspection check` reports it stale until the "
            "judge file names what was certified"]


def _power_plan(decision: Certification, split: SplitRows,
                settings: CertifySettings) -> tuple[PowerPlan, dict[str, str]]:
    """The plan with power for the split: at the rates this run measured on it, shrunk, or
    an assumed one before a run; and where each rate comes from, in words."""
    rates: dict[str, float] = {}
    sources: dict[str, str] = {}
    for label, name in CLASSES.items():
        rate: Rate | None = getattr(decision, name)
        if rate is None:
            rates[label], sources[label] = ASSUMED_RATE, f"{name.upper()} assumed"
        else:
            rates[label] = shrunk_rate(rate.successes, rate.n)
            sources[label] = (f"{settings.split} {name.upper()} {rate.interval.value:.3f} over "
                              f"{rate.n} rows, shrunk")
    plan = plan_with_power(rates, decision.scorable, bar=settings.bar,
                           test_share=share_reaching(split.table, settings.split),
                           class_mix=class_mix(split.table), z=z_for(decision.alpha))
    return plan, sources


def _payload(context: _Context, settings: CertifySettings, decision: Certification,
             samples: int, *, seen: int | None, plan: tuple[PowerPlan, dict[str, str]],
             rejected: Sequence[tuple[int, str, str]] = ()) -> dict[str, Any]:
    """The JSON output (``--format json``): the decision and what it rests on."""
    return {
        "judge": context.judge.name,
        "fingerprint": context.identity.fingerprint,
        "provider": context.provider,
        "model": context.model,
        "split": settings.split,
        "bar": settings.bar,
        "samples": samples,
        "decision": decision.decision,
        "reasons": list(decision.reasons),
        "rows": decision.rows,
        "labelled": dict(decision.labelled),
        "needed": {label: plan[0].classes[label].more for label in CLASSES},
        "needed_perfect": dict(decision.needed_perfect),
        "plan": {**plan[0].as_json(), "sources": plan[1]},
        "errors": decision.errors,
        "max_error_rate": settings.max_error_rate,
        "tpr": None if decision.tpr is None else decision.tpr.as_json(),
        "tnr": None if decision.tnr is None else decision.tnr.as_json(),
        "na_recall": None if decision.na_recall is None else decision.na_recall.as_json(),
        "test_fingerprints_seen": seen,
        "rejected": [{"line": line, "code": code, "message": message}
                     for line, code, message in rejected],
        "certificate": None,
    }


def _certificate(context: _Context, settings: CertifySettings, decision: Certification,
                 samples: int, seen: int, digest: str) -> dict[str, Any]:
    assert decision.tpr is not None and decision.tnr is not None  # certified
    return {
        "certificate_version": CERTIFICATE_VERSION,
        "judge": context.judge.name,
        "fingerprint": context.identity.fingerprint,
        "components": dict(context.identity.components),
        "provider": context.provider,
        "model": context.model,
        "split": settings.split,
        "bar": settings.bar,
        "samples": samples,
        "rows_digest": digest,
        "n": decision.rows,
        "tpr": decision.tpr.as_json(),
        "tnr": decision.tnr.as_json(),
        "na_recall": None if decision.na_recall is None else decision.na_recall.as_json(),
        "errors": decision.errors,
        "test_fingerprints_seen": seen,
        "tool_version": tool_version(),
        "certified_at": utc_now(),
    }


def _render(payload: dict[str, Any], fmt: str, plan: tuple[PowerPlan, dict[str, str]]) -> str:
    if fmt == "json":
        return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
    return _text(payload, describe_plan(plan[0], plan[1], payload["split"]))


def _rate_line(name: str, rate: dict[str, Any] | None, bar: float | None) -> str:
    if rate is None:
        return f"  {name:<10} — (no non-error row of this label)"
    verdict = "" if bar is None else ("  reaches the bar" if rate["low"] >= bar
                                      else "  below the bar")
    return (f"  {name:<10} {rate['value']:.3f} ({rate['low']:.3f}–{rate['high']:.3f}) over "
            f"{rate['n']} rows{verdict}")


def _text(payload: dict[str, Any], plan_lines: Sequence[str]) -> str:
    labelled = payload["labelled"]
    lines = [f"judge {payload['judge']} ({payload['provider']}/{payload['model']}), split "
             f"{payload['split']}, bar {payload['bar']:g}",
             f"  fingerprint {payload['fingerprint']}",
             f"  rows       {payload['rows']} ({labelled.get('pass', 0)} pass, "
             f"{labelled.get('fail', 0)} fail, {labelled.get('not_applicable', 0)} "
             f"not_applicable)"]
    if payload["test_fingerprints_seen"] is not None:  # the judge ran: what it measured
        lines += [f"  errors     {payload['errors']} (at most {payload['max_error_rate']:g} "
                  "of the rows)",
                  _rate_line("tpr", payload["tpr"], payload["bar"]),
                  _rate_line("tnr", payload["tnr"], payload["bar"]),
                  _rate_line("na_recall", payload["na_recall"], None),
                  f"  seen by    {payload['test_fingerprints_seen']} judge version(s) on this "
                  "machine"]
    if payload["decision"] == "certified":
        lines.append(f"certified: wrote {payload['certificate']}" if payload["certificate"]
                     else "certified, but no certificate was written")
    else:
        heading = ("insufficient data" if payload["decision"] == "insufficient_data"
                   else "not certified")
        lines += [f"{heading}:", *(f"  {reason}" for reason in payload["reasons"])]
        lines += [f"  {line}" for line in plan_lines]
    return "\n".join(lines) + "\n"
