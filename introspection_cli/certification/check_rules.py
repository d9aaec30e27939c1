"""``check`` rules for ``judges/<name>.certificate.json`` and ``<name>.exposure.jsonl`` files.

* ``certificate-invalid`` (error): not a certificate (its schema), or a claim that
  does not follow from itself or the repository (a bound, a count, a per-row
  outcome, the run in the exposure file, the provider or model, a bar below
  ``--min-bar``, 0.80 by default);
* ``certificate-orphan`` (error): no judge of that name;
* ``certificate-stale`` (warning): the judge, the certified split's rows or the
  exposure file's account have changed since it was issued, naming what
  (instructions, gate, model or parameters, harness, rows, exposure), and every
  version 1 certificate;
* ``exposure-invalid`` (error): a line of an exposure file is not a look;
* ``judge-not-certified`` (error, only with ``check --require-certified``): a
  judge with a calibration file and no valid certificate, one whose test rows'
  exposure is not clean and was not accepted (``--accept-exposure``), or one made
  with a ``--max-error-rate`` above certify's default (0.05): the bar has a floor,
  and so has the error ceiling.

A valid certificate made with ``--accept-exposure`` or with ``samples`` > 1 is
noted (:attr:`CertificateRules.notes`), not reported. No model call and no heavy
import: the certificate is verified from the files
(:mod:`introspection_cli.certification.state`), and only when one exists or
``--require-certified`` asks. ``check`` hands :func:`certificate_diagnostics` to the
recipe checker (:class:`~introspection_cli.recipe.checker.JudgesDirectoryRules`): the
recipe layer knows nothing of certificates.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from introspection_cli.diagnostics import Diagnostic, error, warning
from introspection_cli.recipe.model import Judge
from introspection_cli.recipe.rules_layout import (
    CALIBRATION_SUFFIX,
    CERTIFICATE_SUFFIX,
    EXPOSURE_SUFFIX,
)
from introspection_cli.recipe.source import entry_problem

#: The bar a certificate must reach unless ``check --min-bar`` says otherwise.
DEFAULT_MIN_BAR = 0.8


@dataclass
class CertificateRules:
    """What the certificate rules found: diagnostics, and notes for the user."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def certificate_diagnostics(listing: Sequence[Path], judge_files: Collection[str],
                            judges: Mapping[str, Judge], *, display: Mapping[Path, str],
                            real_root: str, require_certified: bool,
                            min_bar: float = DEFAULT_MIN_BAR) -> CertificateRules:
    """Every certificate and exposure rule for one ``judges/`` directory.

    ``listing`` is the directory's entries, ``judge_files`` the stems of its
    judge files (valid or not), ``judges`` the judges without errors,
    ``display`` how each path is shown and ``real_root`` the recipe's resolved
    root (a certificate that is a FIFO or a link out of the recipe is never opened).
    """
    found = CertificateRules()
    for path in listing:
        if path.name.endswith(EXPOSURE_SUFFIX):
            found.diagnostics += _exposure_problems(path, display.get(path, str(path)),
                                                    real_root)
    names = {path.name for path in listing}
    certificates = [path for path in listing if path.name.endswith(CERTIFICATE_SUFFIX)]
    calibrated = [path.name.removesuffix(CALIBRATION_SUFFIX) for path in listing
                  if path.name.endswith(CALIBRATION_SUFFIX)]
    if not certificates and not require_certified:
        return found
    refused: dict[str, str] = {}
    valid: set[str] = set()
    for path in certificates:
        stem = path.name.removesuffix(CERTIFICATE_SUFFIX)
        verdict = _certificate(path, stem, judge_files, judges, display, real_root, min_bar)
        found.diagnostics += verdict.diagnostics
        found.notes += verdict.notes
        if verdict.valid:
            valid.add(stem)
            if verdict.unclean is not None:
                refused[stem] = verdict.unclean
            if require_certified and verdict.loose is not None:
                found.diagnostics.append(verdict.loose)
    if require_certified:
        found.diagnostics += [_not_certified(stem, names, display, listing, refused.get(stem))
                              for stem in calibrated if stem in judges
                              and (stem not in valid or stem in refused)]
    return found


@dataclass
class _Verdict:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    valid: bool = False
    #: Why ``--require-certified`` refuses a valid certificate: its exposure, not accepted.
    unclean: str | None = None
    #: ``--require-certified``'s error for a valid certificate with a loose error ceiling.
    loose: Diagnostic | None = None


def _certificate(path: Path, stem: str, judge_files: Collection[str],
                 judges: Mapping[str, Judge], display: Mapping[Path, str], real_root: str,
                 min_bar: float) -> _Verdict:
    from introspection_cli.certification.state import assess_certificate, describe_change
    from introspection_cli.certification.validator import MAX_ERROR_RATE

    shown = display.get(path, str(path))
    problem = entry_problem(path, shown, real_root)
    if problem is not None:
        return _Verdict([problem])
    if stem not in judge_files:
        return _Verdict([error(shown, None, None, "certificate-orphan",
                               f"certificate for judge '{stem}', but judges/{stem}.yaml "
                               "does not exist",
                               "delete it, or restore the judge it certifies")])
    state = assess_certificate(path, judges.get(stem), min_bar=min_bar)
    if state.state == "invalid":
        return _Verdict([error(shown, state.problem_line, None, "certificate-invalid",
                               f"not a valid certificate: {state.problem}",
                               f"replace it: `introspection judges certify --judge {stem}` "
                               "writes a new one")])
    if state.state == "stale":
        return _Verdict([warning(shown, None, None, "certificate-stale",
                                 f"the certificate of judge {stem} is stale: "
                                 f"{describe_change(state)}",
                                 f"certify the judge again: `introspection judges certify "
                                 f"--judge {stem}`")] if stem in judges else [])
    certificate = state.certificate
    if not state.valid or certificate is None:
        return _Verdict()
    verdict = _Verdict(valid=True)
    if certificate.max_error_rate > MAX_ERROR_RATE:
        verdict.loose = error(
            shown, None, None, "judge-not-certified",
            f"the certificate of judge {stem} was made with --max-error-rate "
            f"{certificate.max_error_rate:g}, above the {MAX_ERROR_RATE:g} CI accepts: its "
            "rates are measured only on the rows the judge answered (--require-certified)",
            f"certify it again with the default: `introspection judges certify --judge {stem}`")
    if certificate.samples > 1:
        verdict.notes.append(f"{shown}: certified as a majority of {certificate.samples} calls; "
                             "a deployment making one call is not what was certified")
    exposure = certificate.exposure
    if certificate.split != "test" or not exposure.clean:
        why = "; ".join(exposure.problems())
        if certificate.accepted_exposure:
            verdict.notes.append(f"{shown}: its test rows' exposure is not clean ({why}); "
                                 f"accepted: {certificate.accepted_exposure}")
        else:
            verdict.unclean = why
    return verdict


def _exposure_problems(path: Path, shown: str, real_root: str) -> list[Diagnostic]:
    from introspection_cli.certification.exposure_file import (
        ExposureError,
        parse_looks,
        read_bytes,
    )

    problem = entry_problem(path, shown, real_root)
    if problem is not None:
        return [problem]
    problems_found: list[tuple[int | None, str]]
    try:
        _, problems = parse_looks(read_bytes(path), build=False)
    except ExposureError as exc:
        problems_found = [(None, exc.problem)]
    else:
        problems_found = [(p.line, p.message) for p in problems]
    return [error(shown, line, None, "exposure-invalid",
                  f"not an exposure record: {message.removeprefix('not an exposure record: ')}",
                  "exposure files are only appended to by introspection: restore the line "
                  "from version control")
            for line, message in problems_found]


def _not_certified(stem: str, names: Collection[str], display: Mapping[Path, str],
                   listing: Sequence[Path], unclean: str | None) -> Diagnostic:
    judge_file = next((path for path in listing if path.name in (f"{stem}.yaml", f"{stem}.yml")),
                      None)
    shown = display.get(judge_file, f"judges/{stem}.yaml") if judge_file else f"judges/{stem}.yaml"
    if unclean is not None:
        return error(shown, None, None, "judge-not-certified",
                     f"judge {stem} is certified, but its test rows' exposure is not clean "
                     f"({unclean}) (--require-certified)",
                     "certify it on fresh test rows, or accept the exposure in the "
                     f"certificate: `introspection judges certify --judge {stem} "
                     "--accept-exposure \"REASON\"`")
    why = ("its certificate is not valid" if f"{stem}{CERTIFICATE_SUFFIX}" in names
           else "it has no certificate")
    return error(shown, None, None, "judge-not-certified",
                 f"judge {stem} has calibration data but {why} (--require-certified)",
                 f"certify it on its test split: `introspection judges certify --judge {stem}`")
