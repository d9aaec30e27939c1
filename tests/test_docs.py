"""The README and docs/ stand alone, and the pre-commit set-up they show works."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import REPO

README = (REPO / "README.md").read_text()
DOCS = {path: path.read_text() for path in [REPO / "README.md", *(REPO / "docs").glob("*.md")]}


def test_readme_and_docs_cite_no_contract_file() -> None:
    # The product contract the code was written against is not part of the repository:
    # a reader must never be sent to it ("SPEC §3.1", "SPEC.md"). \bSPEC\b, so that the
    # INTROSPECTION_* variable names do not count.
    citations = [f"{path.relative_to(REPO)}:{number}: {line.strip()}"
                 for path, text in DOCS.items()
                 for number, line in enumerate(text.splitlines(), start=1)
                 if re.search(r"\bSPEC\b|§", line)]
    assert citations == []


def _yaml_blocks() -> list[dict[str, object]]:
    return [yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", README, re.S)]


def _pre_commit_configs() -> list[dict[str, object]]:
    return [block for block in _yaml_blocks() if isinstance(block, dict) and "repos" in block]


def test_readme_pins_the_hook_to_a_full_sha_not_a_tag_that_does_not_exist() -> None:
    remote = [repo for config in _pre_commit_configs() for repo in config["repos"]  # type: ignore[attr-defined]
              if repo["repo"] != "local"]
    assert len(remote) == 1
    # No release tag exists, so the example pins a commit (a placeholder sha of the right form).
    assert re.fullmatch(r"[0-9a-f]{40}", str(remote[0]["rev"]))
    assert [hook["id"] for hook in remote[0]["hooks"]] == ["introspection-check"]


def test_the_local_hook_in_the_readme_runs_like_the_shipped_one() -> None:
    shipped = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())[0]
    local = [repo for config in _pre_commit_configs() for repo in config["repos"]  # type: ignore[attr-defined]
             if repo["repo"] == "local"]
    assert len(local) == 1
    hook = local[0]["hooks"][0]
    for key in ("id", "entry", "always_run", "pass_filenames", "require_serial"):
        assert hook[key] == shipped[key], key


def _git(args: list[str], cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_the_local_hook_in_the_readme_runs_under_pre_commit(tmp_path: Path) -> None:
    """pre-commit itself, with the README's `repo: local` block, in a fresh repository."""
    config = re.search(r"```yaml\n(repos:\n  - repo: local\n.*?)```", README, re.S)
    assert config is not None
    project = tmp_path / "project"
    shutil.copytree(REPO / "fixtures" / "invalid" / "unknown-key", project / "recipes" / "broken")
    (project / ".pre-commit-config.yaml").write_text(config.group(1))
    _git(["init", "-q"], project)
    _git(["add", "."], project)
    bin_dir = str(Path(sys.executable).parent)
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("INTROSPECTION_", "GIT_"))},
           "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
           "PRE_COMMIT_HOME": str(tmp_path / "cache"), "NO_COLOR": "1"}
    command = [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"]
    failed = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True,
                            timeout=120, check=False)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "error[unknown-key]" in failed.stdout

    shutil.rmtree(project / "recipes" / "broken")
    shutil.copytree(REPO / "fixtures" / "recipes" / "customer-support",
                    project / "recipes" / "customer-support")
    _git(["add", "-A"], project)
    passed = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True,
                            timeout=120, check=False)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "introspection check" in passed.stdout and "Passed" in passed.stdout
