"""``judges label``: pick the mode from the options, then hand over to it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from introspection_cli.errors import CommandResult, UsageError
from introspection_cli.fixture.target import writable_target

if TYPE_CHECKING:
    from introspection_cli.labelling.sheet_raters import SheetRaters
    from introspection_cli.recipe.model import Judge


@dataclass(frozen=True)
class LabelRequest:
    """The options of ``judges label``."""

    recipe: Path
    judges: tuple[str, ...] = ()
    assignments: tuple[str, ...] = ()
    from_csv: Path | None = None
    overwrite: bool = False
    to_csv: Path | None = None
    review: Path | None = None
    all_rows: bool = False
    port: int = 0
    open_browser: bool = True
    rater: str | None = None  # as given: a name, or ME
    adjudicate: bool = False


#: ``--rater me``: the rater is you (``git config user.name``, else your login name).
ME = "me"


def resolve_rater(name: str, recipe: Path) -> str:
    """The rater ``--rater NAME`` names: NAME, or for ``me`` git's ``user.name`` (as the
    recipe's repository configures it), else the operating system's login name.
    :class:`UsageError` for a name that cannot be a rater's."""
    from introspection_cli.annotations.record import ADJUDICATED, rater_problem

    if name == ME:
        found = _git_user(recipe) or _login_name()
        if not found:
            raise UsageError("--rater me: neither `git config user.name` nor the login name "
                             "says who you are; pass --rater NAME")
        name = found
    if name == ADJUDICATED:
        raise UsageError(f"--rater {ADJUDICATED} is reserved for the labels an adjudication "
                         "settles (judges label --adjudicate); pass your own name")
    problem = rater_problem(name)
    if problem is not None:
        raise UsageError(f"--rater: {problem}")
    return name


def _git_user(recipe: Path) -> str | None:
    import subprocess

    try:
        done = subprocess.run(["git", "config", "user.name"], cwd=recipe if recipe.is_dir()
                              else None, capture_output=True, timeout=5, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    name = done.stdout[:1024].decode("utf-8", "replace").strip()
    return name if done.returncode == 0 and name else None


def _login_name() -> str | None:
    import getpass

    try:  # $LOGNAME, $USER, $LNAME, $USERNAME, then the account database
        return getpass.getuser().strip() or None
    except (OSError, KeyError):
        return None


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
                                          ("--adjudicate", request.adjudicate),
                                          ("--port", request.port != 0),
                                          ("--no-open", not request.open_browser)) if given]
    if modes and app_flags:
        raise UsageError(f"{', '.join(app_flags)} only apply to the browser app, not to "
                         f"{modes[0]}")
    queues = [flag for flag, given in (("--review", request.review is not None),
                                       ("--all", request.all_rows),
                                       ("--adjudicate", request.adjudicate)) if given]
    if len(queues) > 1:
        raise UsageError(f"{' and '.join(queues)} choose different queues; pass one of them")
    _check_rater(request, modes)
    if not modes:
        return _run_app(request, say)
    if len(set(request.judges)) > 1:
        raise UsageError(f"{modes[0]} works on one judge's file; pass one --judge (several "
                         "--judge label them together in the browser app only)")
    if request.assignments:  # parse before loading anything: a typo is a quick usage error
        from introspection_cli.labelling.setlabels import parse_assignment, run_set

        assignments = [parse_assignment(text) for text in request.assignments]
    judge, notes = single_judge(request.recipe, request.judges[0] if request.judges else None)
    if request.to_csv is None:  # every other mode writes the file: refuse one it cannot
        writable_target(judge.calibration_path)
    rater = resolve_rater(request.rater, request.recipe) if request.rater is not None else None
    if request.assignments:
        result = run_set(judge.calibration_path, assignments)
    elif request.to_csv is not None:
        from introspection_cli.labelling.sheet import write_sheet

        result = write_sheet(read_calibration(judge.calibration_path), request.to_csv,
                             raters=_raters_of(judge, rater))
    else:
        from introspection_cli.labelling.sheet import apply_sheet

        assert request.from_csv is not None
        result = apply_sheet(read_calibration(judge.calibration_path), request.from_csv,
                             overwrite=request.overwrite, raters=_raters_of(judge, rater))
    return replace(result, problems=(*notes, *result.problems))


def _check_rater(request: LabelRequest, modes: list[str]) -> None:
    if request.rater is None:
        return
    if request.adjudicate:
        raise UsageError("--adjudicate records the settled label as rater adjudicated; "
                         "--rater does not apply to it")
    if request.assignments:
        raise UsageError("--rater applies to the browser app, --to-csv and --from; --set "
                         "writes expected only")


def _raters_of(judge: Judge, rater: str | None) -> SheetRaters:
    from introspection_cli.annotations.location import annotations_path
    from introspection_cli.labelling.sheet_raters import SheetRaters

    return SheetRaters(rater, annotations_path(judge.path.parent, judge.name))


def _run_app(request: LabelRequest, say: Callable[[str], None]) -> CommandResult:
    from introspection_cli.labelling.app.run import AppOptions, run_app
    from introspection_cli.labelling.recipe import label_judges

    judges, notes = label_judges(request.recipe, request.judges)
    for judge in judges:  # before serving a page that could not save
        writable_target(judge.calibration_path)
    for note in notes:
        say(note)
    rater = resolve_rater(request.rater, request.recipe) if request.rater is not None else None
    return run_app(judges, AppOptions(review=request.review, all_rows=request.all_rows,
                                     port=request.port, open_browser=request.open_browser,
                                     rater=rater, adjudicate=request.adjudicate), say)
