"""The conversations an HTML report shows: read back from the calibration files.

The report rows say which calibration line each outcome is about (and, with
``snapshot_hash``, which conversation text); the HTML page shows the
conversation of every disagreement and error. They are read again after the run
rather than kept from it, so a run holds no more conversations in memory than
before; a row whose line no longer holds the same conversation is left out
(the page says so) rather than shown beside an outcome it did not get.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from introspection_cli.fixture import verify_calibration_file
from introspection_cli.recipe.model import Recipe
from introspection_cli.reporting.report import EvalReport
from introspection_cli.reporting.sentences import disagreeing, erroring


def shown_transcripts(recipe: Recipe, report: EvalReport) -> dict[str, dict[int, Sequence[Any]]]:
    """judge name -> calibration line -> ``judge_input.events``, for the rows the HTML
    report lists (disagreements and errors) whose line still holds the same row."""
    found: dict[str, dict[int, Sequence[Any]]] = {}
    for judge in report.judges:
        wanted = {row.line: row for row in (*disagreeing(judge.rows), *erroring(judge.rows))}
        definition = recipe.judges.get(judge.name)
        if not wanted or definition is None:
            continue
        events: dict[int, Sequence[Any]] = {}
        for result in verify_calibration_file(definition.calibration_path):
            row = result.row
            shown = wanted.get(result.line)
            if row is None or shown is None or row.conversation_id != shown.conversation_id:
                continue
            if shown.snapshot_hash is not None and shown.snapshot_hash != row.snapshot_hash:
                continue
            conversation = row.judge_input.get("events")
            events[result.line] = conversation if isinstance(conversation, list) else []
        found[judge.name] = events
    return found
