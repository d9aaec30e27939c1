"""A hint is advice a user will follow: following it must fix what it was about.

For the rename hints of ``file-ignored`` and the literal of
``regex-without-slashes`` the advice is applied to a copy of the case and
``check`` runs again: the diagnostic is gone and nothing new is wrong. Case
variants that cannot be committed side by side (``SYSTEM.md`` and
``system.md`` on a case-insensitive file system) are built here.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES, run_cli
from tests.hostile.recipes import base_recipe


def _check(root: Path) -> list[dict[str, Any]]:
    result = run_cli(["check", ".", "--format", "json"], cwd=root)
    assert "Traceback" not in result.stderr
    diagnostics: list[dict[str, Any]] = json.loads(result.stdout)["diagnostics"]
    return diagnostics


def _rename_target(diagnostic: dict[str, Any]) -> str | None:
    found = re.search(r"(?:rename it to|move it to) (\S+?)(?:/)?(?: \(|:|$)", diagnostic["hint"])
    return found.group(1) if found else None


@pytest.mark.parametrize("case", ["file-ignored", "file-ignored-target-exists"])
def test_following_a_rename_hint_makes_the_file_read(case: str, tmp_path: Path) -> None:
    ignored = [d for d in _check(FIXTURES / "invalid" / case) if d["code"] == "file-ignored"]
    renames = [(d, target) for d in ignored if (target := _rename_target(d)) is not None]
    assert renames, ignored
    for number, (diagnostic, target) in enumerate(renames):  # each hint on its own copy
        root = tmp_path / str(number)
        shutil.copytree(FIXTURES / "invalid" / case, root)
        source = root / diagnostic["path"]
        destination = root / target if "/" in target else source.parent / target
        assert not destination.exists(), (diagnostic, "the hint renames onto a file that exists")
        source.rename(destination)
        after = _check(root)
        assert not any(d["code"] == "file-ignored" and d["path"] == diagnostic["path"]
                       for d in after), after
        assert len([d for d in after if d["code"] == "file-ignored"]) == len(ignored) - 1
        # The file is read now: what it holds is checked like any other (these hold no real
        # rows, so a calibration file now reports that), but nothing else breaks.
        assert all(d["code"] == "file-ignored" or d["path"].startswith(target.rstrip("/"))
                   or d["path"].endswith(target) for d in after), (target, after)


def test_following_the_regex_hint_turns_the_value_into_a_working_literal(tmp_path: Path) -> None:
    root = tmp_path / "case"
    shutil.copytree(FIXTURES / "invalid" / "regex-without-slashes", root)
    judge = root / "judges" / "account-lockout.yaml"
    text = judge.read_text()
    for diagnostic in _check(root):
        literal = re.match(r"write (/.*/[imsx]*) to search", diagnostic["hint"] or "")
        if diagnostic["code"] == "regex-without-slashes" and literal:
            line = text.splitlines()[diagnostic["line"] - 1]
            key, _, _ = line.partition(":")
            text = text.replace(line, f"{key}: {json.dumps(literal.group(1))}")
    judge.write_text(text)
    after = _check(root)
    assert [d["code"] for d in after] == ["invalid-value", "regex-without-slashes"], after
    assert "does not compile" in after[1]["hint"]  # the one value with no valid literal


def test_a_wrong_case_system_md_beside_the_real_one_is_told_to_merge(tmp_path: Path) -> None:
    root = base_recipe(tmp_path)
    (root / "system.md").write_text("An older prompt.\n")
    (root / "skills" / "lookup" / "skill.md").write_text("---\nname: lookup\n---\n")
    found = {d["path"]: d for d in _check(root) if d["code"] == "file-ignored"}
    assert set(found) == {"system.md", "skills/lookup/skill.md"}
    assert "merge" in found["system.md"]["hint"] and "SYSTEM.md" in found["system.md"]["hint"]
    assert found["skills/lookup/skill.md"]["hint"].endswith(
        "SKILL.md exists already: merge what skill.md holds into it, then delete skill.md")


def test_a_judge_whose_fix_is_taken_is_never_told_to_rename_onto_it(tmp_path: Path) -> None:
    root = base_recipe(tmp_path)
    judges = root / "judges"
    good = (judges / "good.yaml").read_text()
    (judges / "Good.yaml").write_text(good)  # name: good, but good.yaml exists already
    (hint,) = [d["hint"] for d in _check(root) if d["code"] == "name-mismatch"]
    assert hint.startswith("good.yaml exists already"), hint
    assert "rename the file" not in hint and "set name: Good" not in hint
