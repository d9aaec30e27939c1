"""``introspection init``: a recipe that ``check`` passes, written atomically, never over a file."""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from introspection_cli.fsutil import atomic_create_bytes
from introspection_cli.workflows.scaffold_files import SCAFFOLD
from tests.conftest import REPO, run_cli

WRITTEN = sorted(file.path for file in SCAFFOLD)


def files_under(root: Path) -> dict[str, bytes]:
    """Every file and symlink below ``root``, by relative path (a symlink: its target)."""
    found = {}
    for path in sorted(root.rglob("*")):
        key = path.relative_to(root).as_posix()
        if path.is_symlink():
            found[key] = os.readlink(path).encode()
        elif path.is_file():
            found[key] = path.read_bytes()
    return found


def test_init_writes_a_recipe_that_check_passes_without_a_warning(tmp_path: Path) -> None:
    recipe = tmp_path / "work" / "my-agent"  # parents are created too
    result = run_cli(["init", str(recipe)])
    assert result.returncode == 0, result.stderr
    assert sorted(files_under(recipe)) == WRITTEN
    assert all((recipe / f.path).read_text() == f.text for f in SCAFFOLD)
    checked = run_cli(["check", str(recipe), "--strict", "--format", "json"])
    assert checked.returncode == 0, checked.stdout
    report = json.loads(checked.stdout)
    assert report["diagnostics"] == []
    assert (report["summary"]["judges"], report["summary"]["errors"]) == (2, 0)


def test_init_prints_the_next_three_commands(tmp_path: Path) -> None:
    recipe = tmp_path / "my agent"  # a name the shell would split: quoted in the commands
    result = run_cli(["init", str(recipe)])
    assert result.returncode == 0, result.stderr
    commands = re.findall(r"^  (introspection .*)$", result.stdout, re.M)
    calibration = recipe / "judges" / "billing-request-handling.calibration.jsonl"
    assert commands == [
        "introspection login --url https://your-runtime.example",
        "introspection conversations get --ids-file ids.txt --judge-fixtures --format json "
        f"--append-to '{calibration}'",
        f"introspection judges label '{recipe}' --judge billing-request-handling",
    ]
    for path in WRITTEN:
        assert path in result.stdout


def test_init_in_the_current_directory_names_no_directory(tmp_path: Path) -> None:
    result = run_cli(["init"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert sorted(files_under(tmp_path)) == WRITTEN
    assert "  introspection judges label --judge billing-request-handling\n" in result.stdout
    assert "--append-to judges/billing-request-handling.calibration.jsonl\n" in result.stdout


def test_the_pre_commit_config_is_valid_and_runs_check(tmp_path: Path) -> None:
    assert run_cli(["init", str(tmp_path)]).returncode == 0
    config = tmp_path / ".pre-commit-config.yaml"
    validated = subprocess.run([sys.executable, "-m", "pre_commit", "validate-config",
                                str(config)], capture_output=True, text=True, check=False)
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert "entry: introspection check\n" in config.read_text()


def test_a_directory_holding_other_files_is_fine_and_they_stay(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("mine\n")
    (tmp_path / "judges").mkdir()
    (tmp_path / "judges" / "notes.txt").write_text("also mine\n")
    before = files_under(tmp_path)
    result = run_cli(["init", str(tmp_path)])
    assert result.returncode == 0, result.stderr
    after = files_under(tmp_path)
    assert {k: after[k] for k in before} == before
    assert sorted(set(after) - set(before)) == WRITTEN


@pytest.mark.parametrize("existing", ["SYSTEM.md", "judges/useful-resolution.calibration.jsonl",
                                      ".pre-commit-config.yaml"])
def test_any_file_it_would_write_existing_means_nothing_is_written(
    tmp_path: Path, existing: str
) -> None:
    (tmp_path / existing).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / existing).write_text("keep me\n")
    before = files_under(tmp_path)
    result = run_cli(["init", str(tmp_path)])
    assert result.returncode == 2
    assert str(tmp_path / existing) in result.stderr
    assert "nothing was written" in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == ""
    assert files_under(tmp_path) == before


def test_a_dangling_symlink_counts_as_an_existing_file(tmp_path: Path) -> None:
    (tmp_path / "SYSTEM.md").symlink_to(tmp_path / "nowhere.md")
    result = run_cli(["init", str(tmp_path)])
    assert result.returncode == 2
    assert f"{tmp_path / 'SYSTEM.md'} already exists" in result.stderr
    assert not (tmp_path / "nowhere.md").exists()
    assert sorted(files_under(tmp_path)) == ["SYSTEM.md"]


@pytest.mark.parametrize("blocker", ["recipe", "recipe/judges"])
def test_a_file_where_a_directory_must_go_is_refused(tmp_path: Path, blocker: str) -> None:
    if blocker == "recipe/judges":
        (tmp_path / "recipe").mkdir()
    (tmp_path / blocker).write_text("a file\n")
    before = files_under(tmp_path)
    result = run_cli(["init", str(tmp_path / "recipe")])
    assert result.returncode == 2
    assert f"{tmp_path / blocker} is a file, not a directory; nothing was written" \
        in result.stderr
    assert files_under(tmp_path) == before


def test_a_write_that_fails_halfway_is_undone(tmp_path: Path) -> None:
    """Under a file size limit SYSTEM.md fits and the first judge does not (EFBIG):
    the run says so, exits 2 and removes what it had written, directories included."""
    limit = len(SCAFFOLD[0].text.encode()) + 1
    assert len(SCAFFOLD[1].text.encode()) > limit
    recipe = tmp_path / "new" / "recipe"

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = {k: v for k, v in os.environ.items() if not k.startswith("INTROSPECTION_")}
    done = subprocess.run([sys.executable, "-m", "introspection_cli", "init", str(recipe)],
                          env=env, capture_output=True, text=True, preexec_fn=small_files,
                          timeout=60, check=False)
    assert done.returncode == 2, done.stderr
    assert "File too large" in done.stderr and "nothing was written" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_atomic_create_never_replaces_and_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    atomic_create_bytes(target, b"first\n")
    with pytest.raises(FileExistsError):
        atomic_create_bytes(target, b"second\n")
    link = tmp_path / "link.txt"
    link.symlink_to(tmp_path / "elsewhere.txt")
    with pytest.raises(FileExistsError):
        atomic_create_bytes(link, b"through the link\n")
    assert target.read_bytes() == b"first\n"
    assert not (tmp_path / "elsewhere.txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt", "link.txt"]


def test_the_judges_init_writes_are_the_ones_the_format_docs_show() -> None:
    shown = re.findall(r"```yaml\n(name: .*?)```", (REPO / "docs" / "format.md").read_text(),
                       re.DOTALL)
    written = [f.text for f in SCAFFOLD if f.path.endswith(".yaml")
               and f.path.startswith("judges/")]
    assert shown == written
