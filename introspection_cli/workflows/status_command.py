"""``judges status`` as a command: its options checked, the statuses worked out
(:mod:`~introspection_cli.workflows.status`) and rendered
(:mod:`~introspection_cli.workflows.status_render`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from introspection_cli.evaluation.ledger import Ledger
from introspection_cli.workflows.status import StatusResult, recipe_status


def status_command(path: Path, names: Sequence[str], *, bar: float = 0.8, fmt: str = "text",
                   cache_dir: Path | None = None) -> StatusResult:
    """``judges status``: the report to print; exit 1 when any row is rejected."""
    import math

    from introspection_cli.errors import UsageError
    from introspection_cli.evaluation.ledger import LEDGER_FILE
    from introspection_cli.recipe.selection import load_valid_recipe, select_judges
    from introspection_cli.workflows.status_render import render_status_json, render_status_text

    if fmt not in ("text", "json"):
        raise UsageError(f"unknown format {fmt!r}; use one of: text, json")
    if not (math.isfinite(bar) and 0 < bar < 1):
        raise UsageError(f"--bar {bar} must be a number above 0 and below 1")
    recipe, warnings = load_valid_recipe(path, names)
    judges = select_judges(recipe, names)
    ledger = Ledger((cache_dir or _cache_dir()) / LEDGER_FILE)
    try:
        statuses = recipe_status(judges, ledger, bar)
    finally:
        ledger.close()
    render = render_status_json if fmt == "json" else render_status_text
    problems = [f"judge {s.name}: {s.counts.rejected_rows} calibration row(s) rejected; "
                f"`introspection check {path}` lists them" for s in statuses
                if s.counts.rejected_rows]
    notes = [*warnings, *dict.fromkeys(ledger.warnings)]
    return StatusResult(render(str(path), statuses), 1 if problems else 0,
                        (*problems, *(f"warning: {note}" for note in notes)))


def _cache_dir() -> Path:
    from introspection_cli.evaluation.cache_dir import default_cache_dir

    return default_cache_dir()
