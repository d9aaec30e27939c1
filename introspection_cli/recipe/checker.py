"""Check a whole recipe package: every file, every rule, cross-file rules included."""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from introspection_cli.diagnostics import Diagnostic, Severity, error, warning
from introspection_cli.errors import UsageError
from introspection_cli.recipe import rules_layout
from introspection_cli.recipe.model import Judge, Recipe
from introspection_cli.recipe.rules_judges import check_judge_file
from introspection_cli.recipe.rules_package import (
    AgentInfo,
    SkillInfo,
    check_agent,
    check_agents_together,
    check_skill,
    check_skills_together,
    check_system,
)
from introspection_cli.recipe.rules_tempfiles import leftover_temp_files
from introspection_cli.recipe.source import entry_problem, is_inside, unreadable

CALIBRATION_SUFFIX = rules_layout.CALIBRATION_SUFFIX
#: The file that makes a directory a recipe.
SYSTEM_FILE = "SYSTEM.md"
SKIPPED_DIRS = frozenset({"node_modules", "evals", "__pycache__"})


@dataclass
class Checked:
    """How much of a recipe was read: the summary line's counts."""

    judges: int = 0
    agents: int = 0
    skills: int = 0
    calibration_rows: int = 0

    def add(self, other: Checked) -> None:
        self.judges += other.judges
        self.agents += other.agents
        self.skills += other.skills
        self.calibration_rows += other.calibration_rows


@dataclass
class RecipeResult:
    """Everything ``check`` found in one recipe, and the judges that passed."""

    root: Path
    display: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    judges: dict[str, Judge] = field(default_factory=dict)
    checked: Checked = field(default_factory=Checked)
    #: What the user should know that is no problem (a certificate's accepted exposure).
    notes: list[str] = field(default_factory=list)

    @property
    def errors(self) -> int:
        return sum(d.severity is Severity.ERROR for d in self.diagnostics)


class DirectoryFindings(Protocol):
    """What rules over a whole ``judges/`` directory found: diagnostics, and notes for the user."""

    diagnostics: list[Diagnostic]
    notes: list[str]


class JudgesDirectoryRules(Protocol):
    """Rules over a whole ``judges/`` directory, run once each of its files is checked.

    The certificate rules are these (``check`` passes
    :func:`introspection_cli.certification.check_rules.certificate_diagnostics`): they
    verify certificates, which sit above the recipe layer, so they are handed in.
    ``listing`` is the directory's entries, ``judge_files`` the stems of its judge
    files (valid or not), ``judges`` the judges without errors, ``display`` how each
    path is shown and ``real_root`` the recipe's resolved root.
    """

    def __call__(self, listing: Sequence[Path], judge_files: Collection[str],
                 judges: Mapping[str, Judge], *, display: Mapping[Path, str],
                 real_root: str) -> DirectoryFindings: ...


def display_path(path: Path) -> str:
    """``path`` relative to the working directory when it is below it, else absolute."""
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute)
    return absolute if relative.startswith("..") else relative


def check_recipe(root: Path, *, verify_calibration: bool = True,
                 judges_rules: JudgesDirectoryRules | None = None) -> RecipeResult:
    """Run every rule on the recipe at ``root`` (a directory containing SYSTEM.md).

    ``judges_rules`` run on each ``judges/`` directory once its files are checked
    (``check`` passes the certificate rules, with its ``--require-certified`` and
    ``--min-bar``).

    ``verify_calibration=False`` skips the row-level verification of calibration
    files (``judges eval`` verifies and lists rejected rows itself).
    """
    result = RecipeResult(root, display_path(root))
    real_root = os.path.realpath(root)

    system = root / SYSTEM_FILE
    if os.path.lexists(system):  # else a SYSTEM.md misspelt made it a recipe: root_entries
        result.diagnostics.extend(check_system(system, display_path(system), real_root))
    result.diagnostics.extend(rules_layout.root_entries(
        root, _displayed(_listing(root, result, real_root))))
    skills, skill_dirs = _check_skills(root, result, real_root)
    agents: list[AgentInfo] = []
    agents_listing = _listing(root / "agents", result, real_root)
    result.diagnostics.extend(rules_layout.agents_entries(_displayed(agents_listing)))
    for path, display in _yaml_files(agents_listing, result, real_root):
        found, info = check_agent(path, display)
        result.diagnostics.extend(found)
        result.checked.agents += 1
        if info:
            agents.append(info)
    result.diagnostics.extend(check_agents_together(agents, {s.name for s in skills},
                                                    skill_dirs))
    _check_judges(root / "judges", result, verify_calibration, real_root, judges_rules)
    result.diagnostics.extend(leftover_temp_files(root, result.display))
    result.diagnostics.sort(key=Diagnostic.sort_key)
    return result


def _listing(directory: Path, result: RecipeResult, real_root: str) -> list[Path]:
    """The visible entries of ``directory``, sorted; none when it is absent or not a directory.

    The directory itself may be a link only to somewhere inside the recipe, and
    one that cannot be listed is reported rather than skipped.
    """
    display = display_path(directory)
    try:
        if os.path.islink(directory) and not is_inside(os.path.realpath(directory), real_root):
            result.diagnostics.append(error(
                display, None, None, "symlink-outside",
                f"{directory.name}/ is a symbolic link to a directory outside the recipe",
                "copy the files into the recipe instead"))
            return []
        if not directory.is_dir():
            return []
        with os.scandir(directory) as entries:
            names = sorted(entry.name for entry in entries if not entry.name.startswith("."))
    except OSError as exc:
        result.diagnostics.append(unreadable(display, exc))
        return []
    return [directory / name for name in names]


def _displayed(listing: list[Path]) -> list[tuple[Path, str]]:
    return [(path, display_path(path)) for path in listing]


def _yaml_files(listing: list[Path], result: RecipeResult,
                real_root: str) -> list[tuple[Path, str]]:
    """The ``*.yaml`` regular files of a listing (with their display paths); a ``*.yml`` is
    checked too, with a warning.

    Anything else with those names (a directory, FIFO, broken or escaping link)
    is reported and never opened.
    """
    files = []
    names = {path.name for path in listing}
    for path in listing:
        if path.suffix not in (".yaml", ".yml"):
            continue
        display = display_path(path)
        problem = entry_problem(path, display, real_root)
        if problem is not None:
            result.diagnostics.append(problem)
            continue
        if path.suffix == ".yml":
            result.diagnostics.append(_yml_warning(path, display, names))
        files.append((path, display))
    return files


def _yml_warning(path: Path, display: str, names: set[str]) -> Diagnostic:
    """``yml-extension``; beside a ``.yaml`` of the same name it is never the one used."""
    yaml_name = f"{path.stem}.yaml"
    if yaml_name in names:
        return warning(display, None, None, "yml-extension",
                       f"{path.name} uses the .yml extension and {yaml_name} exists beside it: "
                       f"{yaml_name} is the one used, {path.name} is only checked",
                       f"merge what {path.name} holds into {yaml_name}, then delete {path.name}")
    return warning(display, None, None, "yml-extension", f"{path.name} uses the .yml extension",
                   f"rename it to {yaml_name}")


def _check_skills(root: Path, result: RecipeResult,
                  real_root: str) -> tuple[list[SkillInfo], set[str]]:
    """The valid skills, and the name of every directory holding a SKILL.md entry.

    A directory whose SKILL.md is broken still counts as a skill an agent may
    list: the SKILL.md's own error is the one to report, not ``unknown-skill``.
    """
    skills: list[SkillInfo] = []
    skill_dirs: set[str] = set()
    for path in _skill_files(root / "skills", result, real_root, skill_dirs):
        found, info = check_skill(path, display_path(path))
        result.diagnostics.extend(found)
        result.checked.skills += 1
        if info:
            skills.append(info)
    result.diagnostics.extend(check_skills_together(skills))
    return skills, skill_dirs


def _skill_files(skills_dir: Path, result: RecipeResult, real_root: str,
                 skill_dirs: set[str]) -> list[Path]:
    """Every readable ``SKILL.md`` below ``skills/``, in ``os.walk`` top-down order.

    The name of each directory holding a SKILL.md entry, readable or not, is
    added to ``skill_dirs``. Linked directories are never descended into (a
    link to ``..`` would loop forever); one that leads out of the recipe is
    ``symlink-outside``.
    """
    files: list[Path] = []
    pending = [skills_dir]
    while pending:
        directory = pending.pop()
        subdirs = []
        listing = _listing(directory, result, real_root)
        names = {path.name for path in listing}
        for path in listing:
            slip = rules_layout.skill_file_slip(path, names, display_path(path))
            if slip is not None:
                result.diagnostics.append(slip)
            elif path.name == "SKILL.md":
                skill_dirs.add(unicodedata.normalize("NFKC", directory.name))
                problem = entry_problem(path, display_path(path), real_root)
                if problem is None:
                    files.append(path)
                else:
                    result.diagnostics.append(problem)
            elif path.is_symlink():
                _check_linked_directory(path, result, real_root)
            elif path.is_dir():
                subdirs.append(path)
        pending.extend(reversed(subdirs))
    return files


def _check_linked_directory(path: Path, result: RecipeResult, real_root: str) -> None:
    target = os.path.realpath(path)
    if os.path.isdir(target) and not is_inside(target, real_root):
        result.diagnostics.append(error(
            display_path(path), None, None, "symlink-outside",
            f"skill directory {path.name}/ is a symbolic link to {os.readlink(path)}, "
            "outside the recipe", "copy the skill into the recipe instead"))


def _check_judges(judges_dir: Path, result: RecipeResult, verify_calibration: bool,
                  real_root: str, judges_rules: JudgesDirectoryRules | None) -> None:
    listing = _listing(judges_dir, result, real_root)
    judge_files = _yaml_files(listing, result, real_root)
    stems = {p.name.removesuffix(p.suffix) for p, _ in judge_files}
    result.diagnostics.extend(rules_layout.judges_entries(_displayed(listing), stems))
    for path, display in judge_files:
        found, judge = check_judge_file(path, display)
        result.diagnostics.extend(found)
        result.checked.judges += 1
        # A .yml judge is warned about but is a judge (its rows are checked against it):
        # eval runs it too, unless a .yaml judge of the same name exists (listed first).
        if judge is not None and judge.name not in result.judges:
            result.judges[judge.name] = judge
    for path in listing:
        if not path.name.endswith(CALIBRATION_SUFFIX):
            continue
        stem = path.name.removesuffix(CALIBRATION_SUFFIX)
        display = display_path(path)
        problem = entry_problem(path, display, real_root)
        if problem is not None:
            result.diagnostics.append(problem)
        elif stem not in stems:
            result.diagnostics.append(error(
                display, None, None, "calibration-orphan",
                f"calibration file for judge '{stem}', but judges/{stem}.yaml does not exist",
                f"rename it to match a judge, or add judges/{stem}.yaml"))
        elif verify_calibration:
            from introspection_cli.recipe.calibration_rules import calibration_diagnostics

            found, rows = calibration_diagnostics(path, display)
            result.diagnostics.extend(found)
            result.checked.calibration_rows += rows
    if verify_calibration and judges_rules is not None:
        rules = judges_rules(listing, stems, result.judges,
                             display={p: display_path(p) for p in listing}, real_root=real_root)
        result.diagnostics.extend(rules.diagnostics)
        result.notes.extend(rules.notes)


def is_system_in_wrong_case(name: str) -> bool:
    """``system.md``, ``System.md``...: meant as SYSTEM.md, which is the only name read."""
    return name.lower() == "system.md" and name != SYSTEM_FILE


def is_recipe(path: Path) -> bool:
    """True when ``path`` holds a ``SYSTEM.md`` entry of any kind.

    A dangling or looping link counts (``lexists``, not ``exists``): the recipe
    is then checked and its SYSTEM.md reported as ``broken-symlink``, rather
    than the recipe silently not being one.
    """
    return os.path.lexists(path / SYSTEM_FILE)


def load_recipe(path: Path) -> tuple[Recipe, list[Diagnostic]]:
    """Check the recipe at ``path`` and return its valid judges with all diagnostics.

    Raises UsageError when ``path`` is not a recipe directory.
    """
    if not path.exists():
        raise UsageError(f"{path}: no such file or directory")
    if not path.is_dir() or not is_recipe(path):
        raise UsageError(f"{path} is not a recipe (a directory containing SYSTEM.md)")
    result = check_recipe(path, verify_calibration=False)
    return Recipe(root=path, judges=dict(result.judges)), result.diagnostics
