"""Which recipes a ``check`` invocation covers (SPEC §3.1)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from introspection_cli.errors import UsageError
from introspection_cli.recipe.checker import SKIPPED_DIRS, is_recipe


@dataclass
class Discovery:
    recipes: list[Path] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)  # file arguments in no recipe


def discover(paths: list[str]) -> Discovery:
    """Map PATH arguments to recipe roots, each once, in argument order.

    A directory maps to the nearest recipe at or above it; a file to the
    nearest recipe above it (pre-commit passes changed files, some of which
    belong to no recipe: those are skipped). No PATH: the recipe at ``.``,
    else every recipe below it.
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
        path = Path(raw)
        if not path.exists() and not path.is_symlink():
            raise UsageError(f"{raw}: no such file or directory")
        root = _enclosing_recipe(path if path.is_dir() else path.parent)
        if root is None:
            if path.is_dir():
                raise UsageError(f"{raw} is not a recipe (no SYSTEM.md in it or above it); "
                                 "run `introspection check` with no path to check every "
                                 "recipe below the current directory")
            found.outside.append(raw)
            continue
        key = root.resolve()
        if key not in seen:
            seen.add(key)
            found.recipes.append(root)
    return found


def _enclosing_recipe(directory: Path) -> Path | None:
    current = Path(os.path.abspath(directory))
    for candidate in (current, *current.parents):
        if is_recipe(candidate):
            return Path(os.path.relpath(candidate)) if candidate.is_relative_to(Path.cwd()) \
                else candidate
    return None


def find_recipes(top: Path) -> list[Path]:
    """Every recipe below ``top``, skipping hidden dirs, node_modules and evals."""
    recipes = []
    for directory, subdirs, _files in os.walk(top):
        here = Path(directory)
        if here != top and is_recipe(here):
            recipes.append(here)
            subdirs[:] = []  # a recipe's subdirectories are its contents
            continue
        subdirs[:] = sorted(d for d in subdirs if not d.startswith(".") and d not in SKIPPED_DIRS)
    return recipes
