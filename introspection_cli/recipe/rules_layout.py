"""``file-ignored``: files and directories no rule reads, but that look meant to be read.

A check that says "no problems found" about a recipe whose judges sit in
``judge/`` (so none is ever checked or evaluated) is worse than an error. Each
hint names what the entry should be, and never suggests a name that is itself
taken: when the right name exists already, it says to merge instead.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from introspection_cli.annotations.location import ANNOTATIONS_SUFFIX  # annotation rules
from introspection_cli.diagnostics import Diagnostic, error, warning

CALIBRATION_SUFFIX = ".calibration.jsonl"
CERTIFICATE_SUFFIX = ".certificate.json"
EXPOSURE_SUFFIX = ".exposure.jsonl"  # judges/<name>.exposure.jsonl, read by the certificate rules
#: The directories a recipe's rules read, and the names a slip gives them.
RECIPE_DIRS = ("judges", "agents", "skills")
_DIR_SLIPS = {name: plural for plural in RECIPE_DIRS for name in (plural, plural[:-1])}
_CALIBRATION_SLIPS = (".calibration", "-calibration", "_calibration")


def _ignored(path: Path, display: str, what: str, hint: str) -> Diagnostic:
    return warning(display, None, None, "file-ignored", f"{what} is never read", hint)


def _rename_or_merge(path: Path, target: str, names: Collection[str], what: str) -> str:
    """"rename it to TARGET", or, when TARGET exists already, merge into it."""
    if target in names:
        return f"{target} exists already: merge what {path.name} holds into it, then delete {what}"
    return f"rename it to {target}"


Entries = list[tuple[Path, str]]  # each entry with its display path


def root_entries(root: Path, entries: Entries) -> list[Diagnostic]:
    """Top-level entries of a recipe that look meant to be one of its parts."""
    names = {path.name for path, _ in entries}
    found = []
    for path, shown in entries:
        lowered = path.name.lower()
        if path.is_dir() and lowered in _DIR_SLIPS and path.name not in RECIPE_DIRS:
            target = _DIR_SLIPS[lowered]
            hint = (f"move what it holds into {target}/, then delete it" if target in names
                    else f"rename it to {target}/")
            found.append(_ignored(path, shown, f"directory {path.name}/",
                                  f"{hint}: only {target}/ is read"))
        elif lowered == "system.md" and path.name != "SYSTEM.md":
            found.append(_misspelt_system(path, shown, "SYSTEM.md" in names))
        elif _is_calibration_like(path.name) or path.name.endswith(CALIBRATION_SUFFIX):
            target = f"judges/{_calibration_target(path.name)}"
            found.append(_ignored(path, shown, path.name,
                                  f"calibration files are read only from judges/: move it to "
                                  f"{target}" if not (root / target).exists() else
                                  f"{target} exists already: merge its rows into that file"))
    return found


def _misspelt_system(path: Path, shown: str, system_exists: bool) -> Diagnostic:
    """Beside SYSTEM.md, an ignored file; alone, the recipe has no system prompt."""
    if system_exists:
        return _ignored(path, shown, path.name,
                        "the system prompt is read from SYSTEM.md (upper case): merge "
                        f"{path.name} into it, then delete {path.name}")
    return error(shown, None, None, "system-wrong-case",
                 f"the system prompt is read only from SYSTEM.md (upper case): {path.name} is "
                 "never read", "rename it to SYSTEM.md")


def judges_entries(entries: Entries, judge_names: Collection[str]) -> list[Diagnostic]:
    """Entries of ``judges/`` that are neither a judge nor its calibration file."""
    names = {path.name for path, _ in entries}
    found = []
    for path, shown in entries:
        if path.is_dir() and not path.name.endswith((".yaml", ".yml", CALIBRATION_SUFFIX)):
            found.append(_ignored(path, shown, f"directory judges/{path.name}/",
                                  "judges are read only from judges/ itself: move the judge "
                                  "files and their calibration files up into judges/"))
        elif _is_calibration_like(path.name):
            target = _calibration_target(path.name)
            stem = target.removesuffix(CALIBRATION_SUFFIX)
            if target in names:
                hint = f"{target} exists already: merge its rows into that file, then delete it"
            elif stem in judge_names:
                hint = f"rename it to {target}"
            else:
                hint = (f"no judge is named '{stem}': rename it after the judge it calibrates, "
                        f"<judge>{CALIBRATION_SUFFIX}")
            found.append(_ignored(path, shown, path.name,
                                  f"calibration files are read only when named "
                                  f"<judge>{CALIBRATION_SUFFIX}: {hint}"))
        elif not path.name.endswith(CERTIFICATE_SUFFIX):  # read by the certificate rules
            found.extend(_yaml_slip(path, shown, names, "judge"))
    return found


def agents_entries(entries: Entries) -> list[Diagnostic]:
    """Entries of ``agents/`` that are not read as agents."""
    names = {path.name for path, _ in entries}
    found = []
    for path, shown in entries:
        if path.is_dir() and not path.name.endswith((".yaml", ".yml")):
            found.append(_ignored(path, shown, f"directory agents/{path.name}/",
                                  "agents are read only from agents/ itself: move the agent "
                                  "files up into agents/"))
        else:
            found.extend(_yaml_slip(path, shown, names, "agent"))
    return found


def skill_file_slip(path: Path, names: Collection[str], display: str) -> Diagnostic | None:
    """``skill.md`` (any case but SKILL.md) in a skill directory: never read."""
    if path.name.lower() != "skill.md" or path.name == "SKILL.md":
        return None
    return _ignored(path, display, path.name,
                    "a skill is read from SKILL.md (upper case): "
                    + _rename_or_merge(path, "SKILL.md", names, path.name))


def _yaml_slip(path: Path, display: str, names: Collection[str], kind: str) -> list[Diagnostic]:
    """A ``.json`` file or a ``.YAML``-cased one where ``kind`` files must be ``*.yaml``."""
    stem, dot, suffix = path.name.rpartition(".")
    if not dot or not stem or suffix.lower() not in ("json", "yaml", "yml") \
            or suffix in ("yaml", "yml"):
        return []
    target = f"{stem}.yaml"
    advice = _rename_or_merge(path, target, names, path.name)
    if suffix.lower() == "json":
        advice += " (JSON is valid YAML)" if target not in names else ""
    return [_ignored(path, display, path.name,
                     f"{kind} files are read only when named *.yaml: {advice}")]


def _is_calibration_like(name: str) -> bool:
    """A ``*.jsonl`` other than ``*.calibration.jsonl``, ``*.exposure.jsonl`` or
    ``*.annotations.jsonl``, or a ``*.calibration.json``."""
    lowered = name.lower()
    if name.endswith((CALIBRATION_SUFFIX, EXPOSURE_SUFFIX, ANNOTATIONS_SUFFIX)) \
            and not name.startswith("."):
        return False
    return lowered.endswith(".jsonl") or lowered.endswith(".calibration.json")


def _calibration_target(name: str) -> str:
    """The ``<judge>.calibration.jsonl`` name a misnamed calibration file was meant to have."""
    stem = name
    for suffix in (".calibration.json", ".jsonl"):
        if stem.lower().endswith(suffix):
            stem = stem[:-len(suffix)]
            break
    for slip in _CALIBRATION_SLIPS:
        if stem.lower().endswith(slip):
            stem = stem[:-len(slip)]
            break
    return f"{stem}{CALIBRATION_SUFFIX}"
