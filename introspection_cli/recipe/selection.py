"""Which judges a command works on: the ones named, else every judge with a calibration file.

Shared by ``judges eval``, the labelling commands and ``judges status``; imports
nothing heavy (no Jinja2, no model SDK).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from introspection_cli.diagnostics import Diagnostic, Severity
from introspection_cli.errors import DataError, UsageError
from introspection_cli.recipe.model import Judge, Recipe


def named_judge(recipe: Recipe, name: str) -> Judge:
    """The judge ``name`` (a command's ``--judge NAME``); UsageError naming the known ones."""
    judge = recipe.judges.get(name)
    if judge is None:
        known = ", ".join(sorted(recipe.judges)) or "none"
        raise UsageError(f"no judge named {name} in {recipe.root} (judges without errors: "
                         f"{known})")
    return judge


def select_judges(recipe: Recipe, names: Sequence[str]) -> list[Judge]:
    """The judges to run: ``names`` if given, else every judge with a calibration file."""
    if names:
        unknown = [name for name in names if name not in recipe.judges]
        if unknown:
            known = ", ".join(sorted(recipe.judges)) or "none"
            raise UsageError(f"no judge named {', '.join(unknown)} in {recipe.root} "
                             f"(judges without errors: {known})")
        chosen = [recipe.judges[name] for name in dict.fromkeys(names)]
        missing = [judge for judge in chosen if not judge.calibration_path.is_file()]
        if missing:
            raise DataError("; ".join(
                f"judge {judge.name} has no calibration data: expected {judge.calibration_path}"
                for judge in missing) + _EXPORT_HINT)
        return chosen
    chosen = [judge for _, judge in sorted(recipe.judges.items())
              if judge.calibration_path.is_file()]
    if not chosen:
        raise DataError(f"no calibration data in {recipe.root}: no judge has a "
                        f"judges/<name>.calibration.jsonl file" + _EXPORT_HINT)
    return chosen


_EXPORT_HINT = (". Export rows with `introspection conversations get --ids-file F "
                "--judge-fixtures --format json --append-to judges/<name>.calibration.jsonl`, "
                "then label them with `introspection judges label`")


def load_valid_recipe(path: Path, judges: Sequence[str] = ()) -> tuple[Recipe, list[str]]:
    """Load the recipe for a run of ``judges`` (none: every judge with a calibration file).

    Only errors in those judges' files and calibration files stop the run (exit 1,
    listing them all): a broken agent or another judge says nothing about these
    judges' verdicts, so those errors come back as warnings, one line each.
    """
    from introspection_cli.recipe.checker import load_recipe

    recipe, diagnostics = load_recipe(path)
    errors = sorted((d for d in diagnostics if d.severity is Severity.ERROR),
                    key=Diagnostic.sort_key)
    selected = _selected_files(path, judges)
    blocking = [d for d in errors if _resolved(d.path) in selected]
    if blocking:
        listing = "\n".join(d.format_line(hint=False) for d in blocking)
        raise DataError(f"the recipe {path} has {len(blocking)} error(s) in the judges to "
                        f"evaluate; fix them (`introspection check {path}`) before "
                        f"evaluating:\n{listing}")
    warnings = [f"{d.format_line(hint=False)} (not in a judge being evaluated)"
                for d in errors]
    return recipe, warnings


def _selected_files(root: Path, judges: Sequence[str]) -> set[Path]:
    """The judge and calibration files of the judges a run selects, resolved."""
    from introspection_cli.recipe.checker import CALIBRATION_SUFFIX

    judges_dir = root / "judges"
    names = list(judges)
    if not names:
        try:
            names = [entry.name.removesuffix(CALIBRATION_SUFFIX)
                     for entry in judges_dir.iterdir()
                     if entry.name.endswith(CALIBRATION_SUFFIX)]
        except OSError:  # reported by the recipe check
            names = []
    return {_resolved(str(judges_dir / f"{name}{suffix}")) for name in names
            for suffix in (".yaml", ".yml", CALIBRATION_SUFFIX)}


def _resolved(path: str) -> Path:
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError):  # a symlink loop: compare it as written
        return Path(path)
