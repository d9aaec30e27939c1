"""Which recipes a ``check`` invocation covers (SPEC §3.1)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from introspection_cli.errors import UsageError
from introspection_cli.recipe.checker import (
    SKIPPED_DIRS,
    SYSTEM_FILE,
    is_recipe,
    is_system_in_wrong_case,
)


@dataclass
class Discovery:
    recipes: list[Path] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)  # file arguments in no recipe


def discover(paths: list[str]) -> Discovery:
    """Map PATH arguments to recipe roots, each once, in argument order.

    A file maps to the nearest recipe above it (pre-commit may pass files that
    belong to no recipe: those are skipped); a directory to the nearest recipe
    at or above it, else to every recipe below it. An explicit PATH is always
    honoured, even inside a directory the walk skips (``evals/``, hidden ones).
    No PATH: the recipe at ``.``, else every recipe below it.
    """
    found = Discovery()
    if not paths:
        found.recipes = [Path(".")] if is_recipe(Path(".")) else find_recipes(Path("."))
        if not found.recipes:
            raise UsageError("no recipe found in . or below (a recipe is a directory "
                             "containing SYSTEM.md); pass a recipe directory")
        return found
    seen: set[Path] = set()
    for raw in paths:
        roots = _roots_for(raw)
        if roots is None:
            found.outside.append(raw)
            continue
        for root in roots:
            key = root.resolve()
            if key not in seen:
                seen.add(key)
                found.recipes.append(root)
    return found


def _roots_for(raw: str) -> list[Path] | None:
    """The recipes one PATH argument stands for; None for a file in no recipe."""
    path = Path(raw)
    if not path.exists() and not path.is_symlink():
        raise UsageError(f"{raw}: no such file or directory")
    if not path.is_dir():
        root = _enclosing_recipe(path.parent)
        if root is None and is_system_in_wrong_case(path.name):
            root = path.parent  # a recipe whose SYSTEM.md is misspelt: check says so
        return None if root is None else [root]
    root = _enclosing_recipe(path)
    roots = [root] if root is not None else find_recipes(path)
    if not roots:
        raise UsageError(f"{raw} is not a recipe and has none below it (no SYSTEM.md in it, "
                         "above it or below it); pass a recipe directory, or run "
                         "`introspection check` with no path to check every recipe below "
                         "the current directory")
    return roots


def _enclosing_recipe(directory: Path) -> Path | None:
    current = Path(os.path.abspath(directory))
    for candidate in (current, *current.parents):
        if is_recipe(candidate):
            return Path(os.path.relpath(candidate)) if candidate.is_relative_to(Path.cwd()) \
                else candidate
    return None


def find_recipes(top: Path) -> list[Path]:
    """Every recipe at or below ``top``, nested ones included, in sorted walk order.

    Hidden directories, ``node_modules``, ``evals`` (a recipe's own eval
    fixtures, which may be broken on purpose) and ``__pycache__`` are skipped;
    linked directories are not followed. The entry names ``os.walk`` already
    lists decide what is a recipe, so the walk costs no extra ``stat`` per
    directory.
    """
    recipes = []
    for directory, subdirs, files in os.walk(top):
        if SYSTEM_FILE in files or SYSTEM_FILE in subdirs \
                or any(is_system_in_wrong_case(name) for name in files):
            recipes.append(Path(directory))  # misspelt, it is checked and reported
        subdirs[:] = sorted(d for d in subdirs if not d.startswith(".") and d not in SKIPPED_DIRS)
    return recipes
