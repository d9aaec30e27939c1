"""Check a whole recipe package: every file, every rule, cross-file rules included."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from introspection_cli.diagnostics import Diagnostic, Severity, error, warning
from introspection_cli.errors import UsageError
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

CALIBRATION_SUFFIX = ".calibration.jsonl"
SKIPPED_DIRS = frozenset({"node_modules", "evals", "__pycache__"})


@dataclass
class RecipeResult:
    """Everything ``check`` found in one recipe, and the judges that passed."""

    root: Path
    display: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    judges: dict[str, Judge] = field(default_factory=dict)

    @property
    def errors(self) -> int:
        return sum(d.severity is Severity.ERROR for d in self.diagnostics)


def display_path(path: Path) -> str:
    """``path`` relative to the working directory when it is below it, else absolute."""
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute)
    return absolute if relative.startswith("..") else relative


def check_recipe(root: Path, *, verify_calibration: bool = True) -> RecipeResult:
    """Run every rule on the recipe at ``root`` (a directory containing SYSTEM.md).

    ``verify_calibration=False`` skips the row-level verification of calibration
    files (``judges eval`` verifies and lists rejected rows itself).
    """
    result = RecipeResult(root, display_path(root))

    result.diagnostics.extend(check_system(root / "SYSTEM.md", display_path(root / "SYSTEM.md")))
    skills = _check_skills(root, result)
    agents: list[AgentInfo] = []
    for path in _yaml_files(root / "agents", result):
        found, info = check_agent(path, display_path(path))
        result.diagnostics.extend(found)
        if info:
            agents.append(info)
    result.diagnostics.extend(check_agents_together(agents, {s.name for s in skills}))
    _check_judges(root / "judges", result, verify_calibration)
    result.diagnostics.sort(key=Diagnostic.sort_key)
    return result


def _yaml_files(directory: Path, result: RecipeResult) -> list[Path]:
    """``*.yaml`` files directly in ``directory``; a ``*.yml`` is checked too, with a warning."""
    if not directory.is_dir():
        return []
    files = []
    for path in sorted(directory.iterdir()):
        if path.name.startswith(".") or not path.is_file():
            continue
        if path.suffix == ".yml":
            result.diagnostics.append(warning(display_path(path), None, None, "yml-extension",
                                              f"{path.name} uses the .yml extension",
                                              f"rename it to {path.stem}.yaml"))
        if path.suffix in (".yaml", ".yml"):
            files.append(path)
    return files


def _check_skills(root: Path, result: RecipeResult) -> list[SkillInfo]:
    skills: list[SkillInfo] = []
    skills_dir = root / "skills"
    real_root = root.resolve()
    for directory, subdirs, files in os.walk(skills_dir):
        subdirs[:] = sorted(d for d in subdirs if not d.startswith("."))
        if "SKILL.md" not in files:
            continue
        path = Path(directory) / "SKILL.md"
        if not path.resolve().is_relative_to(real_root):
            result.diagnostics.append(error(display_path(path), None, None, "symlink-outside",
                                            "SKILL.md is a link to a file outside the recipe",
                                            "copy the skill into the recipe instead"))
            continue
        found, info = check_skill(path, display_path(path))
        result.diagnostics.extend(found)
        if info:
            skills.append(info)
    result.diagnostics.extend(check_skills_together(skills))
    return skills


def _check_judges(judges_dir: Path, result: RecipeResult, verify_calibration: bool) -> None:
    judge_files = _yaml_files(judges_dir, result)
    stems = {p.name.removesuffix(p.suffix) for p in judge_files}
    for path in judge_files:
        found, judge = check_judge_file(path, display_path(path))
        result.diagnostics.extend(found)
        if judge is not None and path.suffix == ".yaml":
            result.judges[judge.name] = judge
    if not judges_dir.is_dir():
        return
    for path in sorted(judges_dir.glob(f"*{CALIBRATION_SUFFIX}")):
        stem = path.name.removesuffix(CALIBRATION_SUFFIX)
        if stem not in stems:
            result.diagnostics.append(error(
                display_path(path), None, None, "calibration-orphan",
                f"calibration file for judge '{stem}', but judges/{stem}.yaml does not exist",
                f"rename it to match a judge, or add judges/{stem}.yaml"))
            continue
        if not verify_calibration:
            continue
        from introspection_cli.recipe.calibration_rules import calibration_diagnostics

        result.diagnostics.extend(calibration_diagnostics(path, display_path(path)))


def is_recipe(path: Path) -> bool:
    return (path / "SYSTEM.md").exists()


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
