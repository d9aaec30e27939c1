"""Rules for SYSTEM.md, ``agents/*.yaml`` and ``skills/**/SKILL.md`` (SPEC §1.2)."""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path

from introspection_cli.diagnostics import Diagnostic, error
from introspection_cli.recipe.schema_check import validate
from introspection_cli.recipe.source import (
    MAX_YAML_BYTES,
    entry_problem,
    problem_diagnostic,
    read_text,
    read_yaml,
)
from introspection_cli.recipe.yamlload import Mark, YamlProblem, load_mapping

#: skills-ref's limit, on the name after NFKC normalisation (so "\ufb03" counts 3).
MAX_SKILL_NAME_LENGTH = 64


@dataclass
class AgentInfo:
    name: str
    display: str
    name_mark: Mark
    skills: list[tuple[str, Mark]] = field(default_factory=list)


@dataclass
class SkillInfo:
    name: str
    display: str
    mark: Mark


def check_system(path: Path, display: str, real_root: str) -> list[Diagnostic]:
    """SYSTEM.md: a regular file inside the recipe, valid UTF-8, not blank."""
    problem = entry_problem(path, display, real_root)
    if problem is not None and problem.code == "not-a-file":
        return [error(display, None, None, "system-not-file", "SYSTEM.md must be a regular file",
                      "replace it with a Markdown file holding the system prompt")]
    if problem is not None:
        return [problem]
    text, found = read_text(path, display)
    if text is not None and not text.strip():
        found.append(error(display, 1, 1, "system-blank", "SYSTEM.md is blank",
                           "write the agent's system prompt in it"))
    return found


def check_agent(path: Path, display: str) -> tuple[list[Diagnostic], AgentInfo | None]:
    """One agent file: a mapping with a kebab-case name; description and skills when present."""
    document, found = read_yaml(path, display, what="agent file")
    if document is None:
        return found, None
    schema_found = validate(document, "agent", display)
    found.extend(schema_found)
    name = document.data.get("name")
    if not isinstance(name, str) or any(d.code == "invalid-name" for d in schema_found):
        return found, None
    info = AgentInfo(name, display, document.positions.value(("name",)))
    skills = document.data.get("skills")
    if isinstance(skills, list):
        for index, skill in enumerate(skills):
            if isinstance(skill, str):
                info.skills.append((skill, document.positions.value(("skills", index))))
    return found, info


def check_agents_together(agents: list[AgentInfo], skill_names: AbstractSet[str],
                          skill_dirs: AbstractSet[str] = frozenset()) -> list[Diagnostic]:
    """Cross-file agent rules: unique names, and every listed skill exists.

    ``skill_names`` are the names valid SKILL.md files declare; ``skill_dirs``
    the directories holding any SKILL.md (both NFKC-normalised, as the listed
    names are before comparing). A listed skill whose directory is there but
    whose SKILL.md is broken is not ``unknown-skill``: that file's own error
    says what to fix.
    """
    found: list[Diagnostic] = []
    first: dict[str, AgentInfo] = {}
    for agent in agents:
        if agent.name in first:
            other = first[agent.name]
            found.append(error(agent.display, agent.name_mark.line, agent.name_mark.column,
                               "duplicate-agent-name",
                               f"agent name '{agent.name}' is also used by {other.display}",
                               "give each agent a unique name"))
        else:
            first[agent.name] = agent
        for skill, mark in agent.skills:
            key = unicodedata.normalize("NFKC", skill)  # as skill names are compared
            if key in skill_names or key in skill_dirs:
                continue
            close = difflib.get_close_matches(skill, sorted(skill_names), n=1, cutoff=0.6)
            hint = (f"did you mean '{close[0]}'?" if close
                    else f"add skills/{skill}/SKILL.md or remove it from the list")
            found.append(error(agent.display, mark.line, mark.column, "unknown-skill",
                               f"agent '{agent.name}' lists skill '{skill}', which is not "
                               "in this recipe's skills/", hint))
    return found


def check_skill(path: Path, display: str) -> tuple[list[Diagnostic], SkillInfo | None]:
    """One SKILL.md: front matter between ``---`` lines, valid per the Agent Skills spec."""
    text, found = read_text(path, display)
    if text is None:
        return found, None
    front_matter = _front_matter(text, display, found)
    if front_matter is None:
        return found, None
    try:
        document = load_mapping(front_matter, line_offset=1,
                                scalars="string", what="the front matter")
    except YamlProblem as problem:
        return [*found, problem_diagnostic(display, problem)], None
    name = document.data.get("name")
    mark = document.positions.value(("name",))
    for diagnostic in validate(document, "skill", display):
        # The schema's maxLength counts the name as written; skills-ref measures it
        # after NFKC normalisation, which _skill_name_rules does instead.
        if not (diagnostic.code == "too-long" and isinstance(name, str)
                and (diagnostic.line, diagnostic.column) == (mark.line, mark.column)):
            found.append(diagnostic)
    if not isinstance(name, str) or not name.strip():
        return found, None
    found.extend(_skill_name_rules(name, path.parent.name, display, mark))
    return found, SkillInfo(unicodedata.normalize("NFKC", name.strip()), display, mark)


_LINE_BREAK = re.compile(r"\r\n?|\n")


def _front_matter(text: str, display: str, found: list[Diagnostic]) -> str | None:
    """The YAML between the opening and closing ``---`` lines; None (and an error) if none."""
    lines = _lines(text)
    if not _is_delimiter(lines[0]):
        found.append(error(display, 1, 1, "skill-front-matter",
                           "SKILL.md must start with a '---' line opening its YAML front matter",
                           "add front matter: ---, name: ..., description: ..., ---"))
        return None
    closing = next((i for i in range(1, len(lines)) if _is_delimiter(lines[i])), None)
    if closing is None:
        found.append(error(display, 1, 1, "skill-front-matter",
                           "the front matter opened on line 1 is never closed",
                           "add a '---' line after the front matter"))
        return None
    front_matter = "\n".join(lines[1:closing]) + "\n"
    if len(front_matter) > MAX_YAML_BYTES:
        found.append(error(display, 2, 1, "file-too-large",
                           f"the front matter is larger than {MAX_YAML_BYTES // 1024} KiB, "
                           "so it is not parsed", "keep name and description short"))
        return None
    return front_matter


def _lines(text: str) -> list[str]:
    """``text`` split at its line breaks: LF, CRLF and a lone CR.

    The line breaks the YAML loader counts (YAML 1.2), so that the positions it
    reports inside the front matter are the file's own lines: a ``"a\\rb"``
    scalar with a raw CR spans two lines for both. Not ``str.splitlines()``: it
    also breaks at \\x0b, \\x0c, \\x1c-\\x1e, \\x85, \\u2028 and
    \\u2029, which YAML 1.2 and editors do not count as line ends, so a form
    feed could end the front matter early and line numbers would drift.
    """
    return _LINE_BREAK.split(text)


def _is_delimiter(line: str) -> bool:
    """A ``---`` line, trailing spaces and tabs allowed."""
    return line.rstrip(" \t") == "---"


def _skill_name_rules(raw: str, directory: str, display: str, mark: Mark) -> list[Diagnostic]:
    # Follows the Agent Skills reference validator (skills-ref): NFKC, then at most
    # 64 characters, lowercase letters (any script), digits and single inner hyphens.
    name = unicodedata.normalize("NFKC", raw.strip())
    problems = []
    if name != name.lower():
        problems.append("must be lowercase")
    if name.startswith("-") or name.endswith("-"):
        problems.append("must not start or end with a hyphen")
    if "--" in name:
        problems.append("must not contain a double hyphen")
    if not all(c.isalnum() or c == "-" for c in name):
        problems.append("may contain only letters, digits and hyphens")
    found = [error(display, mark.line, mark.column, "invalid-name",
                   f"skill name '{raw}' {'; '.join(problems)}",
                   "use lowercase letters, digits and single hyphens") ] if problems else []
    if len(name) > MAX_SKILL_NAME_LENGTH:
        found.append(error(display, mark.line, mark.column, "too-long",
                           f"skill name is {len(name)} characters after NFKC normalisation; "
                           f"at most {MAX_SKILL_NAME_LENGTH} are allowed",
                           "shorten the name, and rename its directory to match"))
    if name != unicodedata.normalize("NFKC", directory):
        found.append(error(display, mark.line, mark.column, "skill-name-mismatch",
                           f"skill name '{name}' does not match its directory '{directory}'",
                           f"rename the directory to {name}/ or set name: {directory}"))
    return found


def check_skills_together(skills: list[SkillInfo]) -> list[Diagnostic]:
    """Two SKILL.md files may not declare the same name."""
    found: list[Diagnostic] = []
    first: dict[str, SkillInfo] = {}
    for skill in skills:
        if skill.name in first:
            found.append(error(skill.display, skill.mark.line, skill.mark.column,
                               "duplicate-skill-name",
                               f"skill name '{skill.name}' is also used by "
                               f"{first[skill.name].display}", "give each skill a unique name"))
        else:
            first[skill.name] = skill
    return found
