"""Which judges a command works on: the ones named, else every judge with a calibration file.

Shared by ``judges eval`` and the labelling commands; imports nothing heavy.
"""

from __future__ import annotations

from collections.abc import Sequence

from introspection_cli.errors import DataError, UsageError
from introspection_cli.recipe.model import Judge, Recipe


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
