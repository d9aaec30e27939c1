"""Hostile trees, part two: special files, permissions, calibration rows, scale, odd PATHs."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

from tests.fixture.rowmaker import line, make_row
from tests.hostile.cases_check import MB, Case, calibration_case
from tests.hostile.recipes import (
    RECIPE,
    SKILL,
    base_recipe,
    calibration_lines,
    json_line,
    make_fifo,
    make_socket,
    valid_row_line,
    write_calibration,
    write_judge,
)


def _special_case(relative: str, make: Callable[[Path], None],
                  extra: Callable[[Path], None] | None = None) -> Callable[[Path], list[str]]:
    def build(tmp: Path) -> list[str]:
        root = base_recipe(tmp)
        if extra:
            extra(root)
        path = root / relative
        if path.is_file():
            path.unlink()
        path.parent.mkdir(parents=True, exist_ok=True)
        make(path)
        return [RECIPE]
    return build


def _directory(path: Path) -> None:
    path.mkdir()
    (path / "inside.txt").write_text("a directory, not a file\n")


def _judge_x(root: Path) -> None:
    write_judge(root, "x")


SPECIAL_CASES = [
    Case("judge-is-directory", _special_case("judges/x.yaml", _directory), 1,
         frozenset({"not-a-file"})),
    Case("agent-is-directory", _special_case("agents/a.yaml", _directory), 1,
         frozenset({"not-a-file"})),
    Case("skill-md-is-directory", _special_case("skills/s/SKILL.md", _directory), 1,
         frozenset({"not-a-file"})),
    Case("calibration-is-directory", _special_case("judges/x.calibration.jsonl", _directory,
                                                   extra=_judge_x), 1,
         frozenset({"not-a-file"})),
    Case("system-is-directory", _special_case("SYSTEM.md", _directory), 1,
         frozenset({"system-not-file"})),
    Case("judge-fifo", _special_case("judges/p.yaml", make_fifo), 1, frozenset({"not-a-file"})),
    Case("calibration-fifo", _special_case("judges/x.calibration.jsonl", make_fifo,
                                           extra=_judge_x), 1, frozenset({"not-a-file"})),
    Case("skill-md-fifo", _special_case("skills/lookup/SKILL.md", make_fifo), 1,
         frozenset({"not-a-file"})),
    Case("agent-fifo", _special_case("agents/support.yaml", make_fifo), 1,
         frozenset({"not-a-file"})),
    Case("system-fifo", _special_case("SYSTEM.md", make_fifo), 1,
         frozenset({"system-not-file"})),
    Case("judge-socket", _special_case("judges/s.yaml", make_socket), 1,
         frozenset({"not-a-file"})),
]


def _unreadable_case(relative: str, mode: int = 0) -> Callable[[Path], list[str]]:
    def build(tmp: Path) -> list[str]:
        root = base_recipe(tmp)
        if relative.endswith(".jsonl"):
            write_calibration(root, valid_row_line() + b"\n")
        (root / relative).chmod(mode)
        return [RECIPE]
    return build


PERMISSION_CASES = [
    Case("unreadable-judge", _unreadable_case("judges/good.yaml"), 1,
         frozenset({"file-unreadable"}), honour_permissions=True),
    Case("unreadable-skill", _unreadable_case("skills/lookup/SKILL.md"), 1,
         frozenset({"file-unreadable"}), honour_permissions=True),
    Case("unreadable-agent", _unreadable_case("agents/support.yaml"), 1,
         frozenset({"file-unreadable"}), honour_permissions=True),
    Case("unreadable-system", _unreadable_case("SYSTEM.md"), 1,
         frozenset({"file-unreadable"}), honour_permissions=True),
    Case("unreadable-calibration", _unreadable_case("judges/good.calibration.jsonl"), 1,
         frozenset({"file-unreadable"}), honour_permissions=True),
    Case("unreadable-judges-dir", _unreadable_case("judges"), 1,
         frozenset({"file-unreadable"}), honour_permissions=True),
    Case("unlistable-judges-dir", _unreadable_case("judges", 0o300), 1,
         frozenset({"file-unreadable"}), honour_permissions=True),
    Case("unreadable-skills-dir", _unreadable_case("skills"), 1,
         frozenset({"file-unreadable"}), honour_permissions=True),
    Case("unreadable-skill-subdir", _unreadable_case("skills/lookup"), 1,
         frozenset({"file-unreadable"}), honour_permissions=True),
    Case("unreadable-agents-dir", _unreadable_case("agents"), 1,
         frozenset({"file-unreadable"}), honour_permissions=True),
]


def _nested_row(depth: int) -> bytes:
    return (b'{"schema_version":1,"record_type":"judge_fixture","ok":true,"judge_input":'
            + b"[" * depth + b"]" * depth + b"}")


def _row_with_text(size: int) -> bytes:
    return valid_row_line("conv_big", "z" * size)


def _row_at_depth(depth: int) -> bytes:
    """A row laid out as exported whose tool input nests ``depth`` lists deep."""
    row = line(make_row("conv_deep", {"conversation_id": "conv_deep", "events": [
        {"type": "tool", "name": "t", "input": "NESTED"}]}))
    return row.replace(b'"NESTED"', b"[" * depth + b'"leaf"' + b"]" * depth)


def _row_with_lone_surrogate() -> bytes:
    # Valid JSON that no stream can encode once decoded: the message quotes the label.
    return valid_row_line().replace(b'"expected": "pass"', b'"expected": "bogus\\ud800"') + b"\n"


CALIBRATION_CASES = [
    Case("calibration-50mb-valid-row", calibration_case(lambda: _row_with_text(50 * MB) + b"\n"), 0),
    Case("calibration-50mb-garbage-line",
         calibration_case(lambda: b'{"a": "' + b"q" * (50 * MB) + b"\n"
                           + valid_row_line() + b"\n"), 1,
         frozenset({"fixture-json"})),
    Case("calibration-50mb-one-number", calibration_case(lambda: b"1" * (50 * MB) + b"\n"), 1,
         frozenset({"fixture-json"})),
    Case("calibration-duplicate-keys", calibration_case(
        valid_row_line().replace(b'"expected": "pass"', b'"expected": "pass", "expected": "fail"')
        + b"\n"), 1, frozenset({"fixture-json"})),
    Case("calibration-nan", calibration_case(b'{"schema_version": NaN}\n'), 1,
         frozenset({"fixture-json"})),
    Case("calibration-infinity", calibration_case(
        valid_row_line().replace(b'"schema_version": 1', b'"schema_version": -Infinity') + b"\n"),
         1, frozenset({"fixture-json"})),
    Case("calibration-huge-exponent", calibration_case(
        valid_row_line().replace(b'"schema_version": 1', b'"schema_version": 1e999') + b"\n"),
         1, frozenset({"fixture-json"})),
    Case("calibration-nested-100000", calibration_case(lambda: _nested_row(100_000) + b"\n"), 1,
         frozenset({"fixture-json"})),
    Case("calibration-nested-unclosed", calibration_case(lambda: b"[" * 1_000_000 + b"\n"), 1,
         frozenset({"fixture-json"})),
    Case("calibration-row-nested-5000", calibration_case(lambda: _row_at_depth(5000) + b"\n"), 1,
         frozenset({"fixture-json"})),
    Case("calibration-array-string-number", calibration_case(calibration_lines(
        [json_line([1, 2]), json_line("row"), json_line(3.5), json_line(None)])), 1,
         frozenset({"fixture-json"})),
    Case("calibration-lone-surrogate-label", calibration_case(_row_with_lone_surrogate), 1,
         frozenset({"fixture-bad-label"})),
    Case("calibration-lone-surrogate-label-text", calibration_case(_row_with_lone_surrogate), 1,
         json_output=False),
    Case("calibration-duplicates-everywhere", calibration_case(calibration_lines(
        [valid_row_line("conv_same")] * 2000)), 1,
         frozenset({"fixture-duplicate-conversation"})),
]


def _many_skills(tmp: Path) -> list[str]:
    root = base_recipe(tmp)
    agent = ["name: many", "skills:"]
    for i in range(5000):
        name = f"skill-{i:04d}"
        (root / "skills" / name).mkdir()
        (root / "skills" / name / "SKILL.md").write_text(SKILL.format(name=name))
        agent.append(f"  - {name}")
    (root / "agents" / "many.yaml").write_text("\n".join(agent) + "\n")
    return [RECIPE]


def _many_judges(tmp: Path) -> list[str]:
    root = base_recipe(tmp)
    for i in range(2000):
        write_judge(root, f"judge-{i:04d}")
    return [RECIPE]


SCALE_CASES = [
    Case("five-thousand-skills", _many_skills, 0),
    Case("two-thousand-judges", _many_judges, 0),
]


def _path_to_fifo_in_recipe(tmp: Path) -> list[str]:
    root = base_recipe(tmp)
    make_fifo(root / "judges" / "p.yaml")
    return [f"{RECIPE}/judges/p.yaml"]


def _path_to_fifo_outside(tmp: Path) -> list[str]:
    base_recipe(tmp)
    make_fifo(tmp / "pipe")
    return ["pipe"]


def _file_in_symlinked_dir(tmp: Path) -> list[str]:
    base_recipe(tmp)
    os.symlink(RECIPE, tmp / "link")
    return ["link/judges/good.yaml"]


def _symlinked_recipe_and_real(tmp: Path) -> list[str]:
    base_recipe(tmp)
    os.symlink(RECIPE, tmp / "link")
    return ["link", RECIPE]


def _copy_example(tmp: Path) -> list[str]:
    shutil.copytree(Path(__file__).resolve().parents[2] / "fixtures" / "recipes"
                    / "customer-support", tmp / RECIPE)
    return [RECIPE]


PATH_CASES = [
    Case("path-is-fifo-in-recipe", _path_to_fifo_in_recipe, 1, frozenset({"not-a-file"})),
    Case("path-is-fifo-outside-recipe", _path_to_fifo_outside, 0, json_output=False),
    Case("path-is-dev-null", lambda tmp: ["/dev/null"], 0, json_output=False),
    Case("path-in-symlinked-dir", _file_in_symlinked_dir, 0),
    Case("path-symlink-and-real-recipe-once", _symlinked_recipe_and_real, 0),
    Case("example-recipe-control", _copy_example, 0),
]

ALL_CASES = [*SPECIAL_CASES, *PERMISSION_CASES, *CALIBRATION_CASES, *SCALE_CASES, *PATH_CASES]
