"""``introspection check`` as a command: the recipes found, checked and rendered."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial

from introspection_cli.errors import CommandResult, UsageError, exit_code_for
from introspection_cli.formats import Format


def check_command(paths: Sequence[str], fmt: str, *, strict: bool = False,
                  require_certified: bool = False, min_bar: float = 0.8,
                  color: bool = False) -> CommandResult:
    """Check every recipe ``paths`` name (or hold): the report to print, the notes for
    stderr, and exit 1 when errors (or, with ``strict``, warnings) were found."""
    from introspection_cli.certification.check_rules import certificate_diagnostics
    from introspection_cli.recipe.checker import check_recipe
    from introspection_cli.recipe.discovery import discover
    from introspection_cli.reporting.registry import ReportKind, check_format, render

    chosen = check_format(ReportKind.CHECK, fmt)
    found = discover(list(paths))
    if not (math.isfinite(min_bar) and 0 < min_bar < 1):
        raise UsageError(f"--min-bar {min_bar} must be a number above 0 and below 1")
    notes = [f"note: {raw} is not inside a recipe; skipped" for raw in found.outside]
    certificates = partial(certificate_diagnostics, require_certified=require_certified,
                           min_bar=min_bar)
    results = [check_recipe(root, judges_rules=certificates) for root in found.recipes]
    notes += [f"note: {note}" for result in results for note in result.notes]
    stdout = ""
    if results or chosen is Format.JSON:
        # JSON is always the SPEC §3.1 object, even with nothing checked (empty lists,
        # zero counts), so a consumer can always parse stdout.
        stdout = render(ReportKind.CHECK, chosen, results, color=color)
    else:
        notes.append("note: no PATH is inside a recipe; nothing was checked")
    failing = sum(r.errors for r in results)
    if strict:
        failing += sum(len(r.diagnostics) - r.errors for r in results)
    return CommandResult(stdout, tuple(notes), exit_code_for(problems=failing > 0))
