"""``introspection init [DIR]``: write a minimal recipe, never over anything.

Every file is checked before the first one is written: if any of them exists
(even as a dangling symlink or a directory), nothing is written. A directory
that already holds other files is fine. Each file is created atomically and
never replaces one that appears meanwhile; if a write still fails, the files
and directories this run created are removed again, so a failed ``init``
leaves the directory as it found it.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import stat
from collections.abc import Sequence
from pathlib import Path

from introspection_cli.errors import CommandResult, UsageError
from introspection_cli.fsutil import atomic_create_bytes, kind_of, path_problem
from introspection_cli.workflows.scaffold_files import GATED_JUDGE, SCAFFOLD, ScaffoldFile


def summary(directory: Path, files: Sequence[ScaffoldFile]) -> str:
    """The files written, then the next three commands: log in, export, label."""
    width = max(len(f.path) for f in files)
    listing = [f"  {f.path:<{width}}  {f.about}" for f in files]
    calibration = directory / f"judges/{GATED_JUDGE}.calibration.jsonl"
    recipe = "" if str(directory) == "." else f" {shlex.quote(str(directory))}"
    return "\n".join([
        f"Created a recipe in {directory}:", *listing,
        f"`introspection check{recipe}` passes on it.",
        "",
        "Next: log in to your runtime, export conversations into the gated judge's",
        "calibration file (ids.txt holds their ids, one per line), and label them:",
        "",
        "  introspection login --url https://your-runtime.example",
        "  introspection conversations get --ids-file ids.txt --judge-fixtures "
        f"--format json --append-to {shlex.quote(str(calibration))}",
        f"  introspection judges label{recipe} --judge {GATED_JUDGE}",
    ]) + "\n"


def init_recipe(directory: Path) -> CommandResult:
    """Write :data:`SCAFFOLD` into ``directory`` (created if missing).

    Raises :class:`UsageError` (exit 2), having written nothing, when any file
    it would write exists or a path on the way cannot be used.
    """
    _refuse_collisions(directory)
    created: list[Path] = []
    try:
        for file in SCAFFOLD:
            target = directory / file.path
            created += _make_directories(target.parent)
            atomic_create_bytes(target, file.text.encode("utf-8"))
            created.append(target)
    except OSError as exc:
        _remove(created)
        where = exc.filename or directory
        raise UsageError(f"cannot write {where} ({path_problem(exc)}); nothing was "
                         "written") from None
    return CommandResult(summary(directory, SCAFFOLD))


def _refuse_collisions(directory: Path) -> None:
    """Refuse before writing anything when a file to write, or a directory to write it
    in, is already taken by something else."""
    taken: list[str] = []
    for path in [directory, directory / "judges"]:
        mode = _mode(path)
        if mode is not None and not stat.S_ISDIR(mode):
            kind = "a file" if stat.S_ISREG(mode) else kind_of(mode)
            raise UsageError(f"{path} is {kind}, not a directory; nothing was written (pass "
                             "a new directory, or one to add a recipe to)")
    for file in SCAFFOLD:
        if _mode(directory / file.path, follow=False) is not None:
            taken.append(str(directory / file.path))
    if taken:
        raise UsageError(f"{', '.join(taken)} already exist{'s' if len(taken) == 1 else ''}; "
                         "init never overwrites a file, and nothing was written (pick a new "
                         "directory, or move those files away)")


def _mode(path: Path, *, follow: bool = True) -> int | None:
    """``path``'s ``st_mode`` (through a symlink when ``follow``), None when nothing is there."""
    try:
        return os.stat(path, follow_symlinks=follow).st_mode
    except FileNotFoundError:
        if os.path.lexists(path):
            raise UsageError(f"{path} is a symbolic link to nothing; nothing was written "
                             "(fix or remove the link, or pass another directory)") from None
        return None
    except OSError as exc:
        raise UsageError(f"cannot use {path} ({path_problem(exc)}); nothing was "
                         "written") from None


def _make_directories(directory: Path) -> list[Path]:
    """Create ``directory`` and any missing parents; returns those created, outermost first."""
    missing = []
    for path in [directory, *directory.parents]:
        if os.path.isdir(path):
            break
        missing.append(path)
    for path in reversed(missing):
        path.mkdir()
    return list(reversed(missing))


def _remove(created: list[Path]) -> None:
    """Undo a failed init: its files, then its (now empty) directories, innermost first."""
    for path in reversed(created):
        with contextlib.suppress(OSError):
            if path.is_dir() and not path.is_symlink():
                path.rmdir()
            else:
                path.unlink()
