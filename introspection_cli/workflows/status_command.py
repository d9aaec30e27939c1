"""``judges status`` as a command: its options checked, the statuses worked out
(:mod:`~introspection_cli.workflows.status`) and rendered through the registry
(:mod:`~introspection_cli.reporting.render_status`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from introspection_cli.errors import CommandResult, exit_code_for
from introspection_cli.evaluation.ledger import Ledger
from introspection_cli.workflows.status import recipe_status


def status_command(path: Path, names: Sequence[str], *, bar: float = 0.8, fmt: str = "text",
                   cache_dir: Path | None = None) -> CommandResult:
    """``judges status``: the report to print; exit 1 when any row is rejected."""
    import math

    from introspection_cli.errors import UsageError
    from introspection_cli.evaluation.ledger import LEDGER_FILE
    from introspection_cli.recipe.selection import load_valid_recipe, select_judges
    from introspection_cli.reporting.registry import ReportKind, check_format, render
    from introspection_cli.reporting.status_values import StatusReport

    chosen = check_format(ReportKind.STATUS, fmt)
    if not (math.isfinite(bar) and 0 < bar < 1):
        raise UsageError(f"--bar {bar} must be a number above 0 and below 1")
    recipe, warnings = load_valid_recipe(path, names)
    judges = select_judges(recipe, names)
    ledger = Ledger((cache_dir or _cache_dir()) / LEDGER_FILE)
    try:
        statuses = recipe_status(judges, ledger, bar)
    finally:
        ledger.close()
    problems = [f"judge {s.name}: {s.counts.rejected_rows} calibration row(s) rejected; "
                f"`introspection check {path}` lists them" for s in statuses
                if s.counts.rejected_rows]
    notes = [*warnings, *dict.fromkeys(ledger.warnings)]
    report = StatusReport(str(path), tuple(statuses))
    return CommandResult(render(ReportKind.STATUS, chosen, report),
                         (*problems, *(f"warning: {note}" for note in notes)),
                         exit_code_for(problems=bool(problems)))


def _cache_dir() -> Path:
    from introspection_cli.evaluation.cache_dir import default_cache_dir

    return default_cache_dir()
