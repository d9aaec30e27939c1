"""``judges label``: pick the mode from the options, then hand over to it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from introspection_cli.errors import UsageError
from introspection_cli.fixture.target import writable_target
from introspection_cli.labelling.result import CommandResult


@dataclass(frozen=True)
class LabelRequest:
    """The options of ``judges label``."""

    recipe: Path
    judge: str | None = None
    assignments: tuple[str, ...] = ()
    from_csv: Path | None = None
    overwrite: bool = False
    to_csv: Path | None = None
    review: Path | None = None
    all_rows: bool = False
    port: int = 0
    open_browser: bool = True


def run_label(request: LabelRequest, say: Callable[[str], None]) -> CommandResult:
    """Run the one mode the options ask for (:class:`UsageError` when they ask for several).

    Without --set, --from or --to-csv that is the browser app; ``say`` prints its
    address and notes as soon as it is serving.
    """
    from introspection_cli.labelling.calibration import read_calibration
    from introspection_cli.labelling.recipe import single_judge

    modes = [flag for flag, given in (("--set", bool(request.assignments)),
                                      ("--from", request.from_csv is not None),
                                      ("--to-csv", request.to_csv is not None)) if given]
    if len(modes) > 1:
        raise UsageError(f"{' and '.join(modes)} cannot be combined; run one at a time")
    if request.overwrite and request.from_csv is None:
        raise UsageError("--overwrite only applies to --from FILE.csv")
    app_flags = [flag for flag, given in (("--review", request.review is not None),
                                          ("--all", request.all_rows),
                                          ("--port", request.port != 0),
                                          ("--no-open", not request.open_browser)) if given]
    if modes and app_flags:
        raise UsageError(f"{', '.join(app_flags)} only apply to the browser app, not to "
                         f"{modes[0]}")
    if request.review is not None and request.all_rows:
        raise UsageError("--review and --all choose different queues; pass one of them")
    if not modes:
        return _run_app(request, say)
    if request.assignments:  # parse before loading anything: a typo is a quick usage error
        from introspection_cli.labelling.setlabels import parse_assignment, run_set

        assignments = [parse_assignment(text) for text in request.assignments]
    judge, notes = single_judge(request.recipe, request.judge)
    if request.to_csv is None:  # every other mode writes the file: refuse one it cannot
        writable_target(judge.calibration_path)
    if request.assignments:
        result = run_set(judge.calibration_path, assignments)
    elif request.to_csv is not None:
        from introspection_cli.labelling.sheet import write_sheet

        result = write_sheet(read_calibration(judge.calibration_path), request.to_csv)
    else:
        from introspection_cli.labelling.sheet import apply_sheet

        assert request.from_csv is not None
        result = apply_sheet(read_calibration(judge.calibration_path), request.from_csv,
                             overwrite=request.overwrite)
    result.problems[:0] = notes
    return result


def _run_app(request: LabelRequest, say: Callable[[str], None]) -> CommandResult:
    from introspection_cli.labelling.app.run import AppOptions, run_app
    from introspection_cli.labelling.recipe import single_judge

    judge, notes = single_judge(request.recipe, request.judge)
    writable_target(judge.calibration_path)  # before serving a page that could not save
    for note in notes:
        say(note)
    return run_app(judge, AppOptions(review=request.review, all_rows=request.all_rows,
                                     port=request.port, open_browser=request.open_browser), say)
