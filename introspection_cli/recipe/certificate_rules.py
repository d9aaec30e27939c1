"""``check`` rules for ``judges/<name>.certificate.json`` files.

* ``certificate-invalid`` (error): not a certificate (its schema, its own bar);
* ``certificate-orphan`` (error): no judge of that name;
* ``certificate-stale`` (warning): the judge or the certified split's rows have
  changed since it was issued, naming what (instructions, gate, model or
  parameters, harness, rows);
* ``judge-not-certified`` (error, only with ``check --require-certified``): a
  judge with a calibration file and no valid certificate.

No model call and no heavy import: the certificate is verified from the files
(:mod:`introspection_cli.certification.state`), and only when one exists or
``--require-certified`` asks.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from introspection_cli.diagnostics import Diagnostic, error, warning
from introspection_cli.recipe.model import Judge
from introspection_cli.recipe.rules_layout import CALIBRATION_SUFFIX, CERTIFICATE_SUFFIX
from introspection_cli.recipe.source import entry_problem


def certificate_diagnostics(listing: Sequence[Path], judge_files: Collection[str],
                            judges: Mapping[str, Judge], *, display: Mapping[Path, str],
                            real_root: str, require_certified: bool) -> list[Diagnostic]:
    """Every certificate rule for one ``judges/`` directory.

    ``listing`` is the directory's entries, ``judge_files`` the stems of its
    judge files (valid or not), ``judges`` the judges without errors,
    ``display`` how each path is shown and ``real_root`` the recipe's resolved
    root (a certificate that is a FIFO or a link out of the recipe is never opened).
    """
    names = {path.name for path in listing}
    certificates = [path for path in listing if path.name.endswith(CERTIFICATE_SUFFIX)]
    calibrated = [path.name.removesuffix(CALIBRATION_SUFFIX) for path in listing
                  if path.name.endswith(CALIBRATION_SUFFIX)]
    if not certificates and not require_certified:
        return []
    from introspection_cli.certification.state import assess_certificate, describe_change

    found: list[Diagnostic] = []
    valid: set[str] = set()
    for path in certificates:
        stem = path.name.removesuffix(CERTIFICATE_SUFFIX)
        shown = display.get(path, str(path))
        problem = entry_problem(path, shown, real_root)
        if problem is not None:
            found.append(problem)
            continue
        if stem not in judge_files:
            found.append(error(shown, None, None, "certificate-orphan",
                               f"certificate for judge '{stem}', but judges/{stem}.yaml "
                               "does not exist",
                               "delete it, or restore the judge it certifies"))
            continue
        state = assess_certificate(path, judges.get(stem))
        if state.state == "invalid":
            found.append(error(shown, state.problem_line, None, "certificate-invalid",
                               f"not a valid certificate: {state.problem}",
                               f"replace it: `introspection judges certify --judge {stem}` "
                               "writes a new one"))
        elif state.state == "stale" and stem in judges:
            found.append(warning(shown, None, None, "certificate-stale",
                                 f"the certificate of judge {stem} is stale: "
                                 f"{describe_change(state)}",
                                 f"certify the judge again: `introspection judges certify "
                                 f"--judge {stem}`"))
        elif state.valid:
            valid.add(stem)
    if require_certified:
        found += [_not_certified(stem, names, display, listing)
                  for stem in calibrated if stem in judges and stem not in valid]
    return found


def _not_certified(stem: str, names: Collection[str], display: Mapping[Path, str],
                   listing: Sequence[Path]) -> Diagnostic:
    judge_file = next((path for path in listing if path.name in (f"{stem}.yaml", f"{stem}.yml")),
                      None)
    shown = display.get(judge_file, f"judges/{stem}.yaml") if judge_file else f"judges/{stem}.yaml"
    why = ("its certificate is not valid" if f"{stem}{CERTIFICATE_SUFFIX}" in names
           else "it has no certificate")
    return error(shown, None, None, "judge-not-certified",
                 f"judge {stem} has calibration data but {why} (--require-certified)",
                 f"certify it on its test split: `introspection judges certify --judge {stem}`")
