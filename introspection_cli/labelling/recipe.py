"""The judges a labelling command works on, loaded without the eval machinery."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from introspection_cli.diagnostics import Severity
from introspection_cli.recipe.checker import load_recipe
from introspection_cli.recipe.model import Judge
from introspection_cli.recipe.selection import select_judges


def load_labelling_recipe(path: Path, names: Sequence[str]) -> tuple[list[Judge], list[str]]:
    """The selected judges (named, else every judge with a calibration file) and notes.

    Errors elsewhere in the recipe do not stop labelling (a label is data, and
    ``check`` reports the rest); they are mentioned once. A judge whose own
    file has errors is not loaded, so naming it is a usage error.
    """
    recipe, diagnostics = load_recipe(path)
    judges = select_judges(recipe, names)
    errors = sum(d.severity is Severity.ERROR for d in diagnostics)
    notes = []
    if errors:
        notes.append(f"warning: the recipe {path} has {errors} error(s) outside these rows; "
                     f"`introspection check {path}` lists them")
    return judges, notes


def single_judge(path: Path, name: str | None) -> tuple[Judge, list[str]]:
    """The one judge ``judges label`` works on: ``name``, or the only judge with rows."""
    judges, notes = label_judges(path, [name] if name else [])
    return judges[0], notes


def label_judges(path: Path, names: Sequence[str]) -> tuple[list[Judge], list[str]]:
    """The judges ``judges label`` works on: those named (each once), or the only judge
    with rows. Two judges whose calibration files are one file are refused: a label
    for one would be a label for the other."""
    from introspection_cli.errors import UsageError

    judges, notes = load_labelling_recipe(path, names)
    if not names and len(judges) > 1:
        raise UsageError(f"{path} has {len(judges)} judges with calibration files ("
                         f"{', '.join(j.name for j in judges)}); choose one with --judge NAME, "
                         "or several with --judge A --judge B to label them in one pass")
    seen: dict[Path, Judge] = {}
    for judge in judges:
        real = judge.calibration_path.resolve()
        if real in seen:
            raise UsageError(f"judges {seen[real].name} and {judge.name} share one calibration "
                             f"file ({real}); label them one at a time")
        seen[real] = judge
    return judges, notes
