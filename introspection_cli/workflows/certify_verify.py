"""``judges certify --verify``: run a certificate's recorded procedure again.

``check`` proves a certificate is consistent with the repository; it cannot
prove the model said what the certificate records. ``--verify`` runs the
recorded procedure (the certified fingerprint: its provider, model and
parameters, and its samples) on the recorded rows, through the verdict cache
like any run, decides again at the recorded bar, level, bound and error ceiling, and
exits 1 when the decision differs: for CI that holds the API keys. The run is
a look at the test rows like any other, so it is recorded in the exposure file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from introspection_cli.certification.bounds import METHODS
from introspection_cli.certification.certificate import (
    Certificate,
    certificate_path,
    read_split,
)
from introspection_cli.certification.decision import Certification, decide
from introspection_cli.certification.exposure_record import record_look, run_test_rows, test_look
from introspection_cli.certification.state import assess_certificate, describe_change
from introspection_cli.errors import ExitCode
from introspection_cli.evaluation.cache import default_cache_dir
from introspection_cli.evaluation.fingerprint import judge_identity
from introspection_cli.evaluation.plan import load_valid_recipe
from introspection_cli.evaluation.runner import (
    EvalOptions,
    ProgressCallback,
    make_plans,
    run_plans,
)
from introspection_cli.recipe.model import Judge, Recipe
from introspection_cli.recipe.selection import select_judges
from introspection_cli.workflows.certify import CertifySettings
from introspection_cli.workflows.judges_eval import EvalCommandResult, provider_failure


@dataclass(frozen=True)
class Verification:
    """One certificate verified, or why it could not be."""

    judge: str
    exit_code: ExitCode
    data: dict[str, Any]
    problems: tuple[str, ...] = ()


def verify_certificates(path: Path, options: EvalOptions, settings: CertifySettings, *,
                        progress: ProgressCallback | None = None) -> EvalCommandResult:
    """Verify the certificate of each chosen judge; exit 1 when a decision differs."""
    settings.check()
    recipe, warnings = load_valid_recipe(path, settings.judges)
    results = [_verify(recipe, judge, options, progress)
               for judge in select_judges(recipe, settings.judges)]
    problems = [problem for result in results for problem in result.problems]
    problems += [f"warning: {warning}" for warning in warnings]
    worst = max((result.exit_code for result in results), default=ExitCode.OK)
    document: dict[str, Any] = {"judges": [result.data for result in results]} \
        if settings.every else results[0].data
    if settings.fmt == "json":
        stdout = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    else:
        stdout = "".join(_text(result.data) for result in results)
    return EvalCommandResult(stdout, worst, tuple(problems), document)


def _verify(recipe: Recipe, judge: Judge, options: EvalOptions,
            progress: ProgressCallback | None) -> Verification:
    path = certificate_path(judge.path.parent, judge.name)
    state = assess_certificate(path, judge, min_bar=0.0)
    certificate = state.certificate
    refusal = None
    if state.state == "none":
        refusal = f"there is no {path} to verify"
    elif state.state == "invalid" or certificate is None:
        refusal = (f"{path} cannot be verified: "
                   + (state.problem or describe_change(state)))
    elif judge_identity(judge, provider=certificate.provider, model=certificate.model
                        ).fingerprint != certificate.fingerprint:
        refusal = (f"the judge changed since it was certified ({describe_change(state)}): the "
                   "recorded procedure cannot be run again; certify it again")
    elif read_split(judge.calibration_path, certificate.split).digest != \
            certificate.rows_digest:
        refusal = (f"the rows of split {certificate.split} changed since it was certified: "
                   "the recorded rows cannot be run again; certify it again")
    if refusal is not None or certificate is None:
        return Verification(judge.name, ExitCode.PROBLEMS,
                            {"judge": judge.name, "verified": False, "reasons": [refusal]},
                            (f"judge {judge.name}: not verified: {refusal}",))
    return _rerun(recipe, judge, certificate, options, progress)


def _rerun(recipe: Recipe, judge: Judge, certificate: Certificate, options: EvalOptions,
           progress: ProgressCallback | None) -> Verification:
    recorded = dict(certificate.outcomes)
    chosen = replace(options, judges=(judge.name,), splits=(certificate.split,),
                     provider=certificate.provider, model=certificate.model,
                     samples=certificate.samples, compare_models=())
    plans = [replace(plan, rows=tuple(row for row in plan.rows
                                      if row.conversation_id in recorded))
             for plan in make_plans(recipe, chosen)]
    result = run_plans(str(recipe.root), plans, chosen, progress=progress)
    (run,) = result.run.judges
    if certificate.split == "test":
        look = test_look(run_test_rows(run), fingerprint=certificate.fingerprint,
                         samples=certificate.samples, temperature=judge.llm.temperature)
        if look is not None:
            record_look(judge.path.parent, judge.name, look,
                        cache_dir=options.cache_dir or default_cache_dir())
    decision = decide(run.rows, bar=certificate.bar, max_error_rate=certificate.max_error_rate,
                      bar_na=certificate.bar_na, alpha=certificate.alpha,
                      bound=METHODS[certificate.sequential.method])
    changed = [[row.conversation_id, recorded[row.conversation_id], row.outcome]
               for row in run.rows if recorded[row.conversation_id] != row.outcome]
    data = _data(judge.name, certificate, decision, changed)
    failed, failures = provider_failure(result)
    if failed is not None:
        return Verification(judge.name, failed, {**data, "verified": False},
                            (*failures, f"judge {judge.name}: not verified: rows failed"))
    if decision.certified:
        return Verification(judge.name, ExitCode.OK, data)
    return Verification(judge.name, ExitCode.PROBLEMS, data, tuple(
        f"judge {judge.name}: not verified: the recorded procedure no longer certifies it: "
        f"{reason}" for reason in decision.reasons))


def _data(name: str, certificate: Certificate, decision: Certification,
          changed: list[list[str]]) -> dict[str, Any]:
    return {
        "judge": name, "verified": decision.certified, "decision": decision.decision,
        "reasons": list(decision.reasons), "fingerprint": certificate.fingerprint,
        "provider": certificate.provider, "model": certificate.model,
        "samples": certificate.samples, "split": certificate.split, "bar": certificate.bar,
        "alpha": certificate.alpha, "rows": decision.rows,
        "tpr": None if decision.tpr is None else decision.tpr.as_json(),
        "tnr": None if decision.tnr is None else decision.tnr.as_json(),
        "recorded": {"tpr": certificate.tpr.as_json(), "tnr": certificate.tnr.as_json()},
        "changed_outcomes": changed,
    }


def _text(data: dict[str, Any]) -> str:
    name = data["judge"]
    if "decision" not in data:
        return f"judge {name}: not verified: {data['reasons'][0]}\n"
    same = data["rows"] - len(data["changed_outcomes"])
    head = (f"judge {name} ({data['provider']}/{data['model']}, {data['samples']} sample(s)), "
            f"split {data['split']}: {same} of {data['rows']} rows gave the recorded outcome")
    rates = "; ".join(f"{rate} {data[rate]['value']:.3f} ({data[rate]['low']:.3f}–"
                      f"{data[rate]['high']:.3f}), recorded {data['recorded'][rate]['value']:.3f}"
                      for rate in ("tpr", "tnr") if data[rate] is not None)
    verdict = ("verified: the recorded procedure certifies it again" if data["verified"]
               else "not verified: the recorded procedure no longer certifies it")
    return f"{head}\n  {rates}\n{verdict}\n"
