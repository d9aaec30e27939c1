"""SKILL.md front matter, skill names and agents' skill lists, through the real CLI."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.hostile.recipes import base_recipe


def _diagnostics(root: Path) -> list[tuple[str, int | None, int | None, str]]:
    result = run_cli(["check", str(root.name), "--format", "json"], cwd=root.parent)
    assert "Traceback" not in result.stderr
    return sorted((d["path"], d["line"], d["column"], d["code"])
                  for d in json.loads(result.stdout)["diagnostics"])


def _write_skill(root: Path, directory: str, text: str) -> None:
    (root / "skills" / "lookup" / "SKILL.md").unlink()
    (root / "skills" / "lookup").rmdir()
    (root / "skills" / directory).mkdir()
    (root / "skills" / directory / "SKILL.md").write_bytes(text.encode())


SKILL_PATH = "r/skills/lookup/SKILL.md"


@pytest.mark.parametrize("separator", ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85",
                                       "\u2028", "\u2029"])
def test_only_line_feeds_end_front_matter_lines(tmp_path: Path, separator: str) -> None:
    # str.splitlines() breaks at each of these, so "x<sep>---" used to close the front
    # matter and the unknown key below it went unseen.
    root = base_recipe(tmp_path)
    _write_skill(root, "lookup", f"---\nname: lookup\ndescription: x{separator}---\n"
                                 "foo: 1\n---\n")
    found = _diagnostics(root)
    assert found, "the front matter must not end at the separator"
    assert {path for path, *_ in found} == {SKILL_PATH}


def test_crlf_front_matter_is_read_and_line_numbers_match_editors(tmp_path: Path) -> None:
    root = base_recipe(tmp_path)
    _write_skill(root, "lookup", "---\r\nname: lookup\r\ndescription: x\r\n"
                                 "foo: 1\r\n---   \r\nBody\x0cwith a form feed\u2028\r\n")
    assert _diagnostics(root) == [(SKILL_PATH, 4, 1, "unknown-key")]


def test_a_form_feed_line_inside_the_body_is_not_a_delimiter(tmp_path: Path) -> None:
    root = base_recipe(tmp_path)
    _write_skill(root, "lookup", "---\nname: lookup\ndescription: x\n---\n\x0c---\n")
    assert _diagnostics(root) == []


@pytest.mark.parametrize("breakage", [
    "no front matter\n",
    "---\nname: lookup\ndescription: x\n",
    "---\nname: lookup\ndescription: [x\n---\n",
    "---\nname: lokup\ndescription: x\n---\n",
    "---\nname: lookup\ndescription: x\nversion: 2\n---\n",
], ids=["missing", "unclosed", "yaml-error", "wrong-name", "unknown-field"])
def test_an_agent_listing_a_skill_whose_skill_md_is_broken_gets_no_unknown_skill(
        tmp_path: Path, breakage: str) -> None:
    root = base_recipe(tmp_path)
    (root / "skills" / "lookup" / "SKILL.md").write_text(breakage)
    found = _diagnostics(root)
    assert found
    assert {path for path, *_ in found} == {SKILL_PATH}, found


def test_an_agent_listing_a_missing_skill_still_gets_unknown_skill(tmp_path: Path) -> None:
    root = base_recipe(tmp_path)
    (root / "agents" / "support.yaml").write_text("name: support\nskills:\n  - lookup\n"
                                                  "  - nope\n")
    assert _diagnostics(root) == [("r/agents/support.yaml", 4, 5, "unknown-skill")]


# skills-ref measures the name after unicodedata.normalize("NFKC", name.strip()).
FFI_30 = "\ufb03" * 30            # 30 code points as written, 90 ("ffi" x 30) after NFKC
E_ACUTE_40 = "e\u0301" * 40       # 80 code points as written, 40 ("é" x 40) after NFKC
A_65 = "a" * 65


@pytest.mark.parametrize(("name", "too_long"), [(FFI_30, True), (E_ACUTE_40, False),
                                                (A_65, True), ("a" * 64, False)],
                         ids=["ffi-x30", "e-combining-x40", "a-x65", "a-x64"])
def test_skill_name_length_is_counted_after_nfkc_like_skills_ref(
        tmp_path: Path, name: str, too_long: bool) -> None:
    root = base_recipe(tmp_path)
    _write_skill(root, name, f"---\nname: {name}\ndescription: x\n---\n")
    # The agent lists the name as written; it is compared after NFKC too.
    (root / "agents" / "support.yaml").write_text(f"name: support\nskills:\n  - {name}\n")
    expected = [(f"r/skills/{name}/SKILL.md", 2, 7, "too-long")] if too_long else []
    assert _diagnostics(root) == expected
    assert (len(unicodedata.normalize("NFKC", name)) > 64) is too_long


def test_a_lone_cr_is_a_line_break_for_the_delimiters_as_for_the_yaml_loader(
        tmp_path: Path) -> None:
    # Classic Mac line ends: the front matter used to be one long line (no "---" first)
    root = base_recipe(tmp_path)
    _write_skill(root, "lookup", "---\rname: lookup\rdescription: x\rfoo: 1\r---\rBody\r")
    assert _diagnostics(root) == [(SKILL_PATH, 4, 1, "unknown-key")]


def test_a_cr_inside_the_front_matter_counts_as_in_judge_files(tmp_path: Path) -> None:
    # the YAML loader counts the raw CR in "a<CR>b" as a line break; so do the delimiters,
    # and "---" after it closes the front matter as YAML would end a document there
    root = base_recipe(tmp_path)
    _write_skill(root, "lookup", '---\nname: lookup\ndescription: "a\rb"\nfoo: 1\r---\n'
                                 "bar: 2\n")
    assert _diagnostics(root) == [(SKILL_PATH, 5, 1, "unknown-key")]
